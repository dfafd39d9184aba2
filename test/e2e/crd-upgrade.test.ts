import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  CHART_DIR,
  CHART_TEST_BASE_URL,
  helmUninstall,
  parseObjects,
  randomSuffix,
  runTool,
  setArgs,
} from "../support/chart.js";
import { ChartCopy, documentedCrdUpgrade, documentedHelmUpgrade } from "../support/chart-copy.js";
import { adminKubeConfig, createNamespace } from "../support/kube.js";

/**
 * The CRD upgrade of docs/install.md, run as written on CRDs that `helm install`
 * created, on a copy of the chart whose CRDs are in a group of their own (ChartCopy).
 */
describe("the documented CRD upgrade, after helm install created the CRDs", () => {
  const copy = new ChartCopy("upgrade");
  const release = `crdup-${randomSuffix()}`;
  let namespace = "";

  beforeAll(async () => {
    namespace = await createNamespace(adminKubeConfig(), "crdup");
    await runTool("helm", [
      "install",
      release,
      copy.chart,
      "--namespace",
      namespace,
      ...setArgs({ "service.baseUrl": CHART_TEST_BASE_URL }),
    ]);
  });

  afterAll(async () => {
    await helmUninstall(release, namespace).catch(() => undefined);
    await copy.remove();
  });

  it("keeps its copy out of the shared category and short names", () => {
    for (const f of readdirSync(copy.crdsDir)) {
      const [crd] = parseObjects(readFileSync(join(copy.crdsDir, f), "utf8"));
      const names = (crd?.spec as { names?: Record<string, unknown> } | undefined)?.names;
      expect(names, f).toMatchObject({ plural: expect.any(String) });
      expect(names?.categories, f).toBeUndefined();
      expect(names?.shortNames, f).toBeUndefined();
    }
  });

  it("Helm created the CRDs", async () => {
    const managers = await copy.crdManagers();
    expect(managers.map((m) => m.split(",")[0])).toEqual(copy.crdNames.map(() => "helm/Update"));
  });

  it("applies a changed CRD with the documented command; without --force-conflicts it is refused", async () => {
    // A new chart version: every CRD changes (here, the description of the spec).
    copy.markCrds("Upgraded.");
    const args = documentedCrdUpgrade(copy.crdsDir);
    expect(args).toContain(copy.crdsDir);

    const withoutForce = args.filter((a) => a !== "--force-conflicts");
    await expect(runTool("kubectl", withoutForce)).rejects.toThrow(/conflicts? with "helm"/);

    await runTool("kubectl", args);
    const descriptions = await copy.liveSpecDescriptions();
    expect(descriptions).toHaveLength(copy.crdNames.length);
    for (const d of descriptions) expect(d).toMatch(/^Upgraded\. /);
  });

  it("upgrades and uninstalls the release as before: the CRDs, marked keep and Prune=false, stay", async () => {
    const upgrade = documentedHelmUpgrade(release, namespace).map((a) =>
      a === CHART_DIR ? copy.chart : a,
    );
    await runTool("helm", upgrade);
    await helmUninstall(release, namespace);
    const { stdout } = await runTool("helm", ["list", "-n", namespace, "-q"]);
    expect(stdout.trim()).toBe("");
    expect(await copy.liveSpecDescriptions()).toHaveLength(copy.crdNames.length);
    const annotations = await copy.crdAnnotations();
    for (const a of annotations) {
      expect(a).toMatchObject({
        "helm.sh/resource-policy": "keep",
        "argocd.argoproj.io/sync-options": "Prune=false",
      });
    }
  });
});
