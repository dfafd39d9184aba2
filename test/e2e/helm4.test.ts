import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RENDER_KUBE_VERSION } from "../../scripts/generate-deploy.js";
import {
  CHART_DIR,
  CHART_TEST_BASE_URL,
  helmTemplate,
  parseObjects,
  randomSuffix,
  runTool,
  setArgs,
} from "../support/chart.js";
import {
  ChartCopy,
  crdUpgradeSection,
  documentedCrdUpgrade,
  documentedHelmUpgrade,
} from "../support/chart-copy.js";
import { adminKubeConfig, createNamespace } from "../support/kube.js";

/**
 * The chart under Helm 4 (tools/controlplane/build.sh builds it beside Helm 3): it
 * applies objects server-side (field manager `helm`), `crds/` too, even when they
 * exist. What docs/install.md tells users to run works with it, and Helm 3's releases
 * upgrade under it. The CRD cases work on copies of the chart with CRDs of their own.
 */

const BASE_URL = { "service.baseUrl": CHART_TEST_BASE_URL };

/** `helm4 install` of `chart` as `release` (no pods run: the control plane has no kubelet). */
function install4(release: string, chart: string, namespace: string, extra: string[] = []) {
  return runTool("helm4", [
    "install",
    release,
    chart,
    "-n",
    namespace,
    ...setArgs(BASE_URL),
    ...extra,
  ]);
}

describe("the chart under Helm 4", () => {
  let namespace = "";
  const releases: string[] = [];
  const copies: ChartCopy[] = [];

  beforeAll(async () => {
    namespace = await createNamespace(adminKubeConfig(), "helm4");
  });

  afterAll(async () => {
    for (const release of releases) {
      await runTool("helm4", ["uninstall", release, "-n", namespace, "--no-hooks"]).catch(
        () => undefined,
      );
    }
    for (const copy of copies) await copy.remove();
  });

  it("passes helm lint --strict, renders what Helm 3 renders, and names a value of the wrong type", async () => {
    await runTool("helm4", ["lint", "--strict", CHART_DIR, ...setArgs(BASE_URL)]);
    const template = (values: Record<string, string | number | boolean>) =>
      runTool("helm4", [
        "template",
        "r",
        CHART_DIR,
        "-n",
        "ns",
        "--kube-version",
        RENDER_KUBE_VERSION,
        ...setArgs({ ...BASE_URL, ...values }),
      ]).then((r) => r.stdout);
    const values = { "networkPolicy.enabled": true, "exposure.enabled": true, "shards[0]": "a" };
    expect(parseObjects(await template(values))).toEqual(
      parseObjects(await helmTemplate("r", "ns", values)),
    );
    await expect(template({ "podAnnotations.x": 3 })).rejects.toThrow(
      /at '\/podAnnotations\/x': got number, want string/,
    );
    await expect(template({ replicaCount: 2 })).rejects.toThrow(
      /additional properties 'replicaCount' not allowed/,
    );
  });

  it("installs the CRDs server-side, and the documented CRD upgrade takes them over", async () => {
    const copy = new ChartCopy("helmfour");
    copies.push(copy);
    const release = `h4-${randomSuffix()}`;
    releases.push(release);
    await install4(release, copy.chart, namespace);
    const managers = await copy.crdManagers();
    expect(managers.map((m) => m.split(",")[0])).toEqual(copy.crdNames.map(() => "helm/Apply"));

    copy.markCrds("Upgraded.");
    const args = documentedCrdUpgrade(copy.crdsDir);
    await expect(
      runTool(
        "kubectl",
        args.filter((a) => a !== "--force-conflicts"),
      ),
    ).rejects.toThrow(/conflicts? with "helm"/);
    await runTool("kubectl", args);
    await runTool("helm4", ["upgrade", release, copy.chart, "-n", namespace]);
    for (const d of await copy.liveSpecDescriptions()) expect(d).toMatch(/^Upgraded\. /);

    // A reinstall of another version over the CRDs left in the cluster: Helm 4 applies
    // crds/ and conflicts with the manager of the documented command; the documented
    // way (that command, then --skip-crds) installs.
    await helmUninstall4(release, namespace);
    copy.markCrds("Reinstalled.");
    await expect(install4(release, copy.chart, namespace)).rejects.toThrow(
      /conflicts? with "aidc-operator-crds"/,
    );
    expect(crdUpgradeSection()).toContain("--skip-crds");
    await runTool("kubectl", documentedCrdUpgrade(copy.crdsDir));
    await install4(release, copy.chart, namespace, ["--skip-crds"]);
    for (const d of await copy.liveSpecDescriptions()) expect(d).toMatch(/^Reinstalled\. /);
  });

  it("reinstalls over CRDs Helm 3 installed the documented way; without it, Helm 4 conflicts with Helm 3's manager", async () => {
    const copy = new ChartCopy("helmthree");
    copies.push(copy);
    const release = `h3crd-${randomSuffix()}`;
    releases.push(release);
    await runTool("helm", ["install", release, copy.chart, "-n", namespace, ...setArgs(BASE_URL)]);
    await runTool("helm", ["uninstall", release, "-n", namespace, "--no-hooks"]);
    copy.markCrds("Newer.");
    await expect(install4(release, copy.chart, namespace)).rejects.toThrow(
      /conflicts? with "helm"/,
    );
    expect(crdUpgradeSection()).toMatch(/`"helm"` on those Helm 3 installed/);
    await runTool("kubectl", documentedCrdUpgrade(copy.crdsDir));
    await install4(release, copy.chart, namespace, ["--skip-crds"]);
    for (const d of await copy.liveSpecDescriptions()) expect(d).toMatch(/^Newer\. /);
  });

  it("puts its own older CRDs back over newer ones at a reinstall, as docs/install.md says", async () => {
    const copy = new ChartCopy("helmolder");
    copies.push(copy);
    const release = `h4o-${randomSuffix()}`;
    releases.push(release);
    const original = copy.crdNames.length;
    copy.markCrds("Newer.");
    await install4(release, copy.chart, namespace);
    await helmUninstall4(release, namespace);
    copy.rewriteCrds((t) => t.replace("Newer. ", ""));
    await install4(release, copy.chart, namespace);
    const descriptions = await copy.liveSpecDescriptions();
    expect(descriptions).toHaveLength(original);
    for (const d of descriptions) expect(d).not.toMatch(/^Newer\./);
    expect(crdUpgradeSection()).toMatch(
      /puts\s+its\s+own\s+older\s+ones\s+back\s+over\s+newer\s+ones/,
    );
  });

  it("upgrades a release of a chart version without a value of today's with the documented command, Helm 3 and 4", async () => {
    const older = new ChartCopy("older");
    copies.push(older);
    chartWithoutUninstallCheck(older);
    for (const tool of ["helm", "helm4"] as const) {
      const release = `old-${tool}-${randomSuffix()}`;
      releases.push(release);
      const install = ["install", release, older.chart, "-n", namespace, "--skip-crds"];
      await runTool(tool, [...install, ...setArgs({ ...BASE_URL, replicas: 3 })]);
      // The new chart's defaults under the release's values: `--reuse-values` would keep
      // the old chart's, without uninstallCheck, and its template would fail.
      await runTool(tool, documentedHelmUpgrade(release, namespace));
      const { stdout } = await runTool(tool, [
        "get",
        "values",
        release,
        "-n",
        namespace,
        "--all",
        "-o",
        "json",
      ]);
      expect(JSON.parse(stdout)).toMatchObject({ replicas: 3, uninstallCheck: { enabled: true } });
    }
  });

  it("upgrades a release Helm 3 installed with the documented command, and takes its fields over server-side", async () => {
    const release = `h3-${randomSuffix()}`;
    releases.push(release);
    const common = ["-n", namespace, "--skip-crds", ...setArgs(BASE_URL)];
    await runTool("helm", [
      "install",
      release,
      CHART_DIR,
      ...common,
      ...setArgs({ "podAnnotations.from-helm3": "yes", replicas: 3 }),
    ]);
    const deployment = async () => {
      const { stdout } = await runTool("kubectl", [
        "get",
        "deployment",
        `${release}-aidc-operator`,
        "-n",
        namespace,
        "-o",
        "json",
        "--show-managed-fields",
      ]);
      return JSON.parse(stdout) as {
        spec: { replicas: number; template: { metadata: { annotations: Record<string, string> } } };
        metadata: { managedFields: { manager: string; operation: string }[] };
      };
    };
    // docs/install.md's upgrade keeps the values; Helm 4 keeps Helm 3's client-side
    // apply for such a release.
    await runTool("helm4", documentedHelmUpgrade(release, namespace));
    expect((await deployment()).spec.replicas).toBe(3);
    // Server-side from now on: what the values no longer set is removed.
    await runTool("helm4", ["upgrade", release, CHART_DIR, ...common, "--server-side=true"]);
    const taken = await deployment();
    expect(taken.spec.replicas).toBe(2);
    expect(taken.spec.template.metadata.annotations).not.toHaveProperty("from-helm3");
    expect(taken.metadata.managedFields.filter((f) => f.manager === "helm")).toEqual([
      expect.objectContaining({ operation: "Apply" }),
    ]);
    // And back: Helm 3 upgrades the release Helm 4 wrote.
    await runTool("helm", ["upgrade", release, CHART_DIR, ...common, ...setArgs({ replicas: 3 })]);
    expect((await deployment()).spec.replicas).toBe(3);
  });
});

/**
 * A copy of the chart as a version before `uninstallCheck` was added: its template,
 * its values and their schema removed.
 */
function chartWithoutUninstallCheck(copy: ChartCopy): void {
  rmSync(join(copy.chart, "templates/uninstall-check-job.yaml"));
  const values = join(copy.chart, "values.yaml");
  const text = readFileSync(values, "utf8");
  const without = text.replace(/^uninstallCheck:\n(?: .*\n|\n)*/m, "");
  if (without === text) throw new Error("no uninstallCheck block in the chart's values.yaml");
  writeFileSync(values, without);
  const schemaFile = join(copy.chart, "values.schema.json");
  const schema = JSON.parse(readFileSync(schemaFile, "utf8")) as {
    properties: Record<string, unknown>;
  };
  delete schema.properties.uninstallCheck;
  writeFileSync(schemaFile, JSON.stringify(schema));
}

/** `helm4 uninstall` without the pre-delete hook (its Job would never run here). */
async function helmUninstall4(release: string, namespace: string): Promise<void> {
  await runTool("helm4", ["uninstall", release, "-n", namespace, "--no-hooks"]);
}
