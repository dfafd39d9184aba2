import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { root } from "../../scripts/generated-files.js";
import { CHART_DIR, parseObjects, randomSuffix, runTool } from "./chart.js";
import { eventually } from "./kube.js";

/**
 * A copy of the chart whose CRDs are in a group of their own (`<prefix><random>.aidc.io`),
 * for tests that install, change and delete CRDs: the control plane's `aidc.io` CRDs are
 * shared with the other test files. The copy's kinds stay out of the shared `aidc`
 * category and short names (tj, fs, ...), which other files' `kubectl get aidc` and
 * `kubectl get tj` resolve.
 */
export class ChartCopy {
  readonly group: string;
  readonly dir = mkdtempSync(join(tmpdir(), "aidc-chart-copy-"));
  readonly chart = join(this.dir, "aidc-operator");
  readonly crdsDir = join(this.chart, "crds");
  /** The names of the copy's CRDs. */
  readonly crdNames: string[];

  constructor(prefix: string) {
    this.group = `${prefix}${randomSuffix()}.aidc.io`;
    cpSync(join(root, CHART_DIR), this.chart, { recursive: true });
    this.rewriteCrds((t) =>
      t
        .replaceAll("aidc.io", this.group)
        .replace(/^ +(?:shortNames|categories):\n(?: +- .*\n)+/gm, ""),
    );
    this.crdNames = readdirSync(this.crdsDir).flatMap((f) =>
      parseObjects(readFileSync(join(this.crdsDir, f), "utf8")).map((o) => o.metadata.name),
    );
  }

  /** Rewrites every CRD of the copy: `change` applied to its text. */
  rewriteCrds(change: (text: string) => string): void {
    for (const f of readdirSync(this.crdsDir)) {
      const path = join(this.crdsDir, f);
      writeFileSync(path, change(readFileSync(path, "utf8")));
    }
  }

  /** A new chart version: the description of every CRD's spec starts with `mark`. */
  markCrds(mark: string): void {
    this.rewriteCrds((t) => t.replace(/^( +spec:\n +description: "?)/m, `$1${mark} `));
  }

  /** The description of each CRD's spec as the API server has it. */
  liveSpecDescriptions(): Promise<string[]> {
    return this.eachCrd("{.spec.versions[0].schema.openAPIV3Schema.properties.spec.description}");
  }

  /** The field managers of each CRD, `manager/operation` joined by commas. */
  crdManagers(): Promise<string[]> {
    return this.eachCrd("{range .metadata.managedFields[*]}{.manager}/{.operation},{end}");
  }

  /** The annotations of each of the copy's CRDs as the API server has them. */
  async crdAnnotations(): Promise<Record<string, string>[]> {
    const lines = await this.eachCrd("{.metadata.annotations}");
    return lines.map((l) => JSON.parse(l || "{}"));
  }

  /** A jsonpath template evaluated on each of the copy's CRDs, one line each. */
  private async eachCrd(template: string): Promise<string[]> {
    const { stdout } = await runTool("kubectl", [
      "get",
      "crd",
      ...this.crdNames,
      "-o",
      `jsonpath={range .items[*]}${template}{"\\n"}{end}`,
    ]);
    return stdout.trim().split("\n");
  }

  /** Deletes the copy's CRDs and files. */
  async remove(): Promise<void> {
    // Deleted once every kind can be listed: a CRD deleted while the API server still
    // initializes its storage can stay Terminating for good (its CRD finalizer fails to
    // list the instances, "storage is (re)initializing", and was seen not to try again),
    // and kubectl waits for it until its timeout.
    await eventually(() =>
      runTool("kubectl", ["get", this.crdNames.join(","), "-A", "-o", "name"]).then(() => true),
    ).catch(() => undefined);
    await runTool("kubectl", ["delete", "crd", ...this.crdNames, "--ignore-not-found"]).catch(
      () => undefined,
    );
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** The CRD upgrade section of docs/install.md. */
export function crdUpgradeSection(): string {
  const doc = readFileSync(join(root, "docs/install.md"), "utf8");
  const start = doc.indexOf("**CRD upgrades.**");
  if (start < 0) throw new Error("no CRD upgrade section in docs/install.md");
  return doc.slice(start, doc.indexOf("\n### ", start));
}

/**
 * The documented CRD upgrade command (the `kubectl apply` line of docs/install.md's CRD
 * upgrade section), its arguments, applying `crdsDir` instead of the chart's CRDs.
 */
export function documentedCrdUpgrade(crdsDir: string): string[] {
  const line = crdUpgradeSection()
    .split("\n")
    .find((l) => l.startsWith("kubectl apply"));
  if (!line) throw new Error("no kubectl apply line in the CRD upgrade section of docs/install.md");
  const args = line.split(/\s+/).slice(1);
  if (!args.includes(`${CHART_DIR}/crds`))
    throw new Error(`${line} does not apply the chart's CRDs`);
  return args.map((a) => (a === `${CHART_DIR}/crds` ? crdsDir : a));
}

/**
 * The documented upgrade command (the `helm upgrade` line of docs/install.md's CRD
 * upgrade section), its arguments, for `release` in `namespace`.
 */
export function documentedHelmUpgrade(release: string, namespace: string): string[] {
  const line = crdUpgradeSection()
    .split("\n")
    .find((l) => l.startsWith("helm upgrade"));
  if (!line) throw new Error("no helm upgrade line in the CRD upgrade section of docs/install.md");
  const [, , documentedRelease, chart, ...rest] = line.split(/\s+/);
  if (documentedRelease !== "aidc-operator" || chart !== CHART_DIR) {
    throw new Error(`${line} does not upgrade the release aidc-operator to ${CHART_DIR}`);
  }
  const args = ["upgrade", release, CHART_DIR, ...rest];
  return args.map((a, i) => (args[i - 1] === "-n" ? namespace : a));
}
