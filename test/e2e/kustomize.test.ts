import { readdirSync, readFileSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as k8s from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse, stringify } from "yaml";
import {
  BASE_NAMESPACE,
  BASE_RELEASE,
  BASE_URL_PLACEHOLDER,
} from "../../scripts/generate-deploy.js";
import { root } from "../../scripts/generated-files.js";
import { runOperator } from "../../src/cli/run.js";
import { loadConfig } from "../../src/config/load.js";
import { freePort } from "../../src/controlplane/controlplane.js";
import { API_KEY_SECRET_KEY } from "../../src/crds/serviceconnection.js";
import { startEmulator } from "../../src/emulator/server.js";
import {
  CHART_DIR,
  canI,
  helmTemplate,
  operatorKubeConfigFor,
  parseObjects,
  type RenderedObject,
  randomSuffix,
  runTool,
  storedApiKeyMode,
} from "../support/chart.js";
import { writeDocumentedOverlay } from "../support/install-doc.js";
import { adminKubeConfig, eventually } from "../support/kube.js";

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

/** Cluster-scoped objects would outlive the test; namespaced ones go with the plane. */
async function deleteClusterRoles(): Promise<void> {
  await runTool("kubectl", [
    "delete",
    "clusterrole,clusterrolebinding",
    "-l",
    "app.kubernetes.io/managed-by=kustomize,app.kubernetes.io/part-of=aidc-operator",
  ]).catch(() => undefined);
}

const key = (o: RenderedObject) => `${o.kind}/${o.metadata.namespace ?? ""}/${o.metadata.name}`;

describe("the kustomize base", () => {
  let rendered: RenderedObject[] = [];

  beforeAll(async () => {
    const { stdout } = await runTool("kubectl", ["kustomize", "deploy"]);
    rendered = parseObjects(stdout);
  });

  afterAll(deleteClusterRoles);

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

describe("the namespace overlay of docs/install.md", () => {
  const namespace = `ml-platform-${randomSuffix()}`;
  let dir = "";
  let rendered = "";

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "aidc-overlay-"));
    // The overlay of docs/install.md as written, but for where it finds deploy/ and a
    // namespace of this run's own.
    writeDocumentedOverlay(dir, namespace);
    rendered = (await runTool("kubectl", ["kustomize", dir])).stdout;
  });

  afterAll(async () => {
    await deleteClusterRoles();
    await runTool("kubectl", ["delete", "namespace", namespace, "--wait=false"]).catch(
      () => undefined,
    );
    await rm(dir, { recursive: true, force: true });
  });

  it("names the base's namespace nowhere: objects, bindings and the operator config all move", () => {
    expect(rendered).not.toContain(BASE_NAMESPACE);
    const objects = parseObjects(rendered);
    expect(objects.filter((o) => o.kind === "Namespace").map((o) => o.metadata.name)).toEqual([
      namespace,
    ]);
    const deployment = objects.find((o) => o.kind === "Deployment") as unknown as {
      spec: { template: { spec: { containers: { image: string }[] } } };
    };
    expect(deployment.spec.template.spec.containers[0]?.image).toMatch(
      /^registry\.example\.com\/platform\/aidc-operator:/,
    );
  });

  it("runs the operator there: its Lease and the ServiceConnections' Secrets in the new namespace", async () => {
    await runTool("kubectl", [
      ...["apply", "--server-side", "--force-conflicts"],
      ...["--field-manager=aidc-operator-e2e-overlay", "-k", dir],
    ]);
    const configMap = parseObjects(rendered).find((o) => o.kind === "ConfigMap") as unknown as {
      data: Record<string, string>;
    };
    const configFile = join(dir, "config.yaml");
    await writeFile(configFile, configMap.data["config.yaml"] ?? "");
    const env = { POD_NAMESPACE: namespace, POD_NAME: "overlay-0", AIDC_API_KEY: "k" };
    const config = await loadConfig({
      file: configFile,
      env: { ...env, AIDC_SERVICE_BASE_URL: "https://x.example" },
    });
    expect(config.connections.secretNamespace).toBe(namespace);
    expect(config.leaderElection.leaseNamespace).toBe(namespace);

    // The operator as the overlay's ServiceAccount, the key of a connection in a Secret
    // of the new namespace: the connection is Ready only if the Role there lets it read it.
    const apiKey = "overlay-account-key-0123456789";
    const emulator = await startEmulator({ apiKey });
    const admin = adminKubeConfig();
    const core = admin.makeApiClient(k8s.CoreV1Api);
    const custom = admin.makeApiClient(k8s.CustomObjectsApi);
    const connection = `overlay-${randomSuffix()}`;
    await core.createNamespacedSecret({
      namespace,
      body: { metadata: { name: "account" }, stringData: { [API_KEY_SECRET_KEY]: apiKey } },
    });
    await custom.createClusterCustomObject({
      group: "aidc.io",
      version: "v1alpha1",
      plural: "serviceconnections",
      body: {
        apiVersion: "aidc.io/v1alpha1",
        kind: "ServiceConnection",
        metadata: { name: connection },
        spec: {
          baseUrl: emulator.url,
          allowInsecureHttp: true,
          apiKeySecretRef: { namespace, name: "account" },
          allowedNamespaces: { names: [namespace] },
        },
      },
    });
    const kubeconfig = join(dir, "operator.kubeconfig");
    await writeFile(
      kubeconfig,
      operatorKubeConfigFor({ namespace, name: BASE_RELEASE }).exportConfig(),
      { mode: 0o600 },
    );
    let stop: () => void = () => undefined;
    const exited = runOperator({
      configFile,
      kubeconfig,
      env: {
        ...env,
        AIDC_SERVICE_BASE_URL: emulator.url,
        AIDC_SERVICE_ALLOW_INSECURE_HTTP: "true",
        AIDC_METRICS_PORT: String(await freePort()),
        AIDC_LOG_LEVEL: "silent",
      },
      stopSignal: new Promise<void>((r) => {
        stop = r;
      }),
    });
    try {
      let ready: unknown;
      await eventually(async () => {
        const conn = (await custom.getClusterCustomObject({
          group: "aidc.io",
          version: "v1alpha1",
          plural: "serviceconnections",
          name: connection,
        })) as { status?: { conditions?: { type: string; status: string; reason: string }[] } };
        ready = conn.status?.conditions?.find((c) => c.type === "Ready");
        return (ready as { status?: string } | undefined)?.status === "True";
      }, 30_000).catch(() => undefined);
      expect(ready).toMatchObject({ status: "True", reason: "Connected" });
      const leases = await admin
        .makeApiClient(k8s.CoordinationV1Api)
        .listNamespacedLease({ namespace });
      expect(leases.items.map((l) => l.metadata?.name)).toContain("aidc-operator-leader");
    } finally {
      // Deleted while the operator runs: it removes its finalizer.
      const ref = { group: "aidc.io", version: "v1alpha1", plural: "serviceconnections" };
      await custom.deleteClusterCustomObject({ ...ref, name: connection }).catch(() => undefined);
      await eventually(
        () =>
          custom.getClusterCustomObject({ ...ref, name: connection }).then(
            () => false,
            () => true,
          ),
        20_000,
      ).catch(() => undefined);
      stop();
      await exited;
      await emulator.stop();
    }
  });
});
