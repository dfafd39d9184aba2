import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { root } from "../../scripts/generated-files.js";
import {
  CHART_DIR,
  CHART_TEST_BASE_URL,
  helmUninstall,
  parseObjects,
  randomSuffix,
  runTool,
  setArgs,
} from "../support/chart.js";
import { adminKubeConfig, createNamespace, eventually } from "../support/kube.js";

/**
 * The CRD upgrade of docs/install.md, run as written on CRDs that `helm install`
 * created. The control plane's CRDs are shared with the other tests, so this one works
 * on a copy of the chart whose CRDs are in a group of their own (`<random>.aidc.io`).
 */

/** The documented CRD upgrade command: the `kubectl apply` line of docs/install.md. */
function documentedUpgradeCommand(): string[] {
  const doc = readFileSync(join(root, "docs/install.md"), "utf8");
  const section = doc.slice(doc.indexOf("**CRD upgrades.**"));
  const line = section.split("\n").find((l) => l.startsWith("kubectl apply"));
  if (!line) throw new Error("no kubectl apply line in the CRD upgrade section of docs/install.md");
  return line.split(/\s+/).slice(1);
}

describe("the documented CRD upgrade, after helm install created the CRDs", () => {
  const group = `upgrade${randomSuffix()}.aidc.io`;
  const dir = mkdtempSync(join(tmpdir(), "aidc-crd-upgrade-"));
  const chart = join(dir, "aidc-operator");
  const crdsDir = join(chart, "crds");
  const release = `crdup-${randomSuffix()}`;
  let namespace = "";
  let crdNames: string[] = [];

  /** Rewrites every CRD of the copy: `change` applied to its text. */
  function rewriteCrds(change: (text: string) => string): void {
    for (const f of readdirSync(crdsDir)) {
      const path = join(crdsDir, f);
      writeFileSync(path, change(readFileSync(path, "utf8")));
    }
  }

  beforeAll(async () => {
    namespace = await createNamespace(adminKubeConfig(), "crdup");
    cpSync(join(root, CHART_DIR), chart, { recursive: true });
    // The copy's kinds stay out of the shared `aidc` category and short names (tj, fs,
    // ...), which other files' `kubectl get aidc` and `kubectl get tj` resolve.
    rewriteCrds((t) =>
      t.replaceAll("aidc.io", group).replace(/^ +(?:shortNames|categories):\n(?: +- .*\n)+/gm, ""),
    );
    crdNames = readdirSync(crdsDir).flatMap((f) =>
      parseObjects(readFileSync(join(crdsDir, f), "utf8")).map((o) => o.metadata.name),
    );
    await runTool("helm", [
      "install",
      release,
      chart,
      "--namespace",
      namespace,
      ...setArgs({ "service.baseUrl": CHART_TEST_BASE_URL }),
    ]);
  });

  afterAll(async () => {
    await helmUninstall(release, namespace).catch(() => undefined);
    // Deleted once every kind can be listed: a CRD deleted while the API server still
    // initializes its storage can stay Terminating for good (its CRD finalizer fails to
    // list the instances, "storage is (re)initializing", and was seen not to try again),
    // and kubectl waits for it until its timeout.
    await eventually(() =>
      runTool("kubectl", ["get", crdNames.join(","), "-A", "-o", "name"]).then(() => true),
    ).catch(() => undefined);
    await runTool("kubectl", ["delete", "crd", ...crdNames, "--ignore-not-found"]).catch(
      () => undefined,
    );
    rmSync(dir, { recursive: true, force: true });
  });

  it("keeps its copy out of the shared category and short names", () => {
    for (const f of readdirSync(crdsDir)) {
      const [crd] = parseObjects(readFileSync(join(crdsDir, f), "utf8"));
      const names = (crd?.spec as { names?: Record<string, unknown> } | undefined)?.names;
      expect(names, f).toMatchObject({ plural: expect.any(String) });
      expect(names?.categories, f).toBeUndefined();
      expect(names?.shortNames, f).toBeUndefined();
    }
  });

  it("Helm created the CRDs", async () => {
    const { stdout } = await runTool("kubectl", [
      "get",
      "crd",
      ...crdNames,
      "-o",
      'jsonpath={range .items[*]}{.metadata.managedFields[0].manager}{"\\n"}{end}',
    ]);
    expect(stdout.trim().split("\n")).toEqual(crdNames.map(() => "helm"));
  });

  it("applies a changed CRD with the documented command; without --force-conflicts it is refused", async () => {
    // A new chart version: every CRD changes (here, the description of the spec).
    rewriteCrds((t) => t.replace(/^( +spec:\n +description: "?)/m, "$1Upgraded. "));
    const args = documentedUpgradeCommand().map((a) => (a === `${CHART_DIR}/crds` ? crdsDir : a));
    expect(args).toContain(crdsDir);

    const withoutForce = args.filter((a) => a !== "--force-conflicts");
    await expect(runTool("kubectl", withoutForce)).rejects.toThrow(/conflicts? with "helm"/);

    await runTool("kubectl", args);
    const { stdout } = await runTool("kubectl", [
      "get",
      "crd",
      ...crdNames,
      "-o",
      'jsonpath={range .items[*]}{.spec.versions[0].schema.openAPIV3Schema.properties.spec.description}{"\\n"}{end}',
    ]);
    const descriptions = stdout.trim().split("\n");
    expect(descriptions).toHaveLength(crdNames.length);
    for (const d of descriptions) expect(d).toMatch(/^Upgraded\. /);
  });
});
