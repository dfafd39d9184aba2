import { readdirSync, readFileSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse, stringify } from "yaml";
import {
  BASE_NAMESPACE,
  BASE_RELEASE,
  BASE_URL_PLACEHOLDER,
} from "../../scripts/generate-deploy.js";
import { root } from "../../scripts/generated-files.js";
import { loadConfig } from "../../src/config/load.js";
import {
  CHART_DIR,
  canI,
  helmTemplate,
  operatorKubeConfigFor,
  parseObjects,
  type RenderedObject,
  runTool,
  storedApiKeyMode,
} from "../support/chart.js";

/**
 * The kustomize base (deploy/): it renders the chart's objects and CRDs, and applies to
 * the real control plane.
 */

/**
 * An object without what differs between Helm and kustomize by design: the Helm
 * labels, and the base URL (the base has none; the chart requires one).
 */
function comparable(o: RenderedObject): RenderedObject {
  const copy = structuredClone(o);
  const data = (copy as { data?: Record<string, string> }).data;
  if (copy.kind === "ConfigMap" && data?.["config.yaml"]) {
    const config = parse(data["config.yaml"]) as { service?: { baseUrl?: string } };
    delete config.service?.baseUrl;
    data["config.yaml"] = stringify(config);
  }
  for (const labels of [
    copy.metadata.labels,
    (copy as { spec?: { template?: { metadata?: { labels?: Record<string, string> } } } }).spec
      ?.template?.metadata?.labels,
  ]) {
    if (!labels) continue;
    delete labels["helm.sh/chart"];
    delete labels["app.kubernetes.io/managed-by"];
  }
  return copy;
}

const key = (o: RenderedObject) => `${o.kind}/${o.metadata.namespace ?? ""}/${o.metadata.name}`;

describe("the kustomize base", () => {
  let rendered: RenderedObject[] = [];

  beforeAll(async () => {
    const { stdout } = await runTool("kubectl", ["kustomize", "deploy"]);
    rendered = parseObjects(stdout);
  });

  afterAll(async () => {
    // Cluster-scoped objects would outlive the test; namespaced ones go with the plane.
    await runTool("kubectl", [
      "delete",
      "clusterrole,clusterrolebinding",
      "-l",
      "app.kubernetes.io/managed-by=kustomize,app.kubernetes.io/part-of=aidc-operator",
    ]).catch(() => undefined);
  });

  it("renders the chart's objects with its default values, and nothing else but the Namespace and CRDs", async () => {
    const chart = parseObjects(
      await helmTemplate(BASE_RELEASE, BASE_NAMESPACE, {
        "service.baseUrl": BASE_URL_PLACEHOLDER,
      }),
    )
      // Helm hooks (the uninstall check) are not part of the base.
      .filter((o) => o.metadata.annotations?.["helm.sh/hook"] === undefined)
      .map(comparable);
    const ours = rendered.filter(
      (o) => o.kind !== "CustomResourceDefinition" && o.kind !== "Namespace",
    );
    expect(ours.map(comparable).sort((a, b) => key(a).localeCompare(key(b)))).toEqual(
      chart.sort((a, b) => key(a).localeCompare(key(b))),
    );
    for (const o of ours)
      expect(o.metadata.labels?.["app.kubernetes.io/managed-by"]).toBe("kustomize");
    expect(rendered.filter((o) => o.kind === "Namespace").map((o) => o.metadata)).toEqual([
      expect.objectContaining({
        name: BASE_NAMESPACE,
        labels: expect.objectContaining({ "pod-security.kubernetes.io/enforce": "restricted" }),
      }),
    ]);
  });

  it("has no service base URL: the operator started from it without an overlay stops, naming it", async () => {
    const configMap = rendered.find((o) => o.kind === "ConfigMap");
    const configYaml = (configMap as { data?: Record<string, string> } | undefined)?.data?.[
      "config.yaml"
    ];
    expect(configYaml).toBeDefined();
    expect(configYaml).not.toContain("baseUrl");
    const dir = await mkdtemp(join(tmpdir(), "aidc-kustomize-"));
    const file = join(dir, "config.yaml");
    await writeFile(file, configYaml ?? "");
    await expect(
      loadConfig({ file, env: { POD_NAMESPACE: BASE_NAMESPACE, AIDC_API_KEY: "k" } }),
    ).rejects.toThrow(/^invalid operator config: service\.baseUrl: required/);
    await rm(dir, { recursive: true, force: true });
  });

  it("carries the chart's CRDs unchanged", () => {
    const crds = rendered.filter((o) => o.kind === "CustomResourceDefinition");
    const chartCrds = readdirSync(join(root, CHART_DIR, "crds")).flatMap((f) =>
      parseObjects(readFileSync(join(root, CHART_DIR, "crds", f), "utf8")),
    );
    expect(crds.map((c) => c.metadata.name).sort()).toEqual(
      chartCrds.map((c) => c.metadata.name).sort(),
    );
    for (const crd of chartCrds) {
      expect(crds.find((c) => c.metadata.name === crd.metadata.name)).toEqual(crd);
    }
  });

  it("applies to the control plane, and its ServiceAccount gets the operator's rights", async () => {
    await runTool("kubectl", [
      "apply",
      "--server-side",
      "--force-conflicts",
      "--field-manager=aidc-operator-e2e-kustomize",
      "-k",
      "deploy",
    ]);
    const { stdout } = await runTool("kubectl", ["get", "-k", "deploy", "-o", "name"]);
    expect(stdout.trim().split("\n")).toHaveLength(rendered.length);
    // The mode as the API server stored it: 0o440 (owner and group read), not 440 decimal.
    expect(await storedApiKeyMode(BASE_NAMESPACE, BASE_RELEASE)).toBe(0o440);

    const kc = operatorKubeConfigFor({ namespace: BASE_NAMESPACE, name: BASE_RELEASE });
    expect(
      await canI(kc, {
        verb: "patch",
        group: "aidc.io",
        resource: "trainingjobs/status",
        namespace: "ml",
      }),
    ).toBe(true);
    // Secrets only in its own namespace, where ServiceConnections' keys are kept
    // (connections.secretNamespace, role-connection-secrets.yaml); none where it watches.
    for (const verb of ["get", "list"]) {
      const secrets = { verb, group: "", resource: "secrets" };
      expect(await canI(kc, { ...secrets, namespace: BASE_NAMESPACE }), verb).toBe(true);
      expect(await canI(kc, { ...secrets, namespace: "ml" }), verb).toBe(false);
    }
    // Exposure is off by default: no Service writes.
    expect(
      await canI(kc, { verb: "create", group: "", resource: "services", namespace: "ml" }),
    ).toBe(false);
  });
});
