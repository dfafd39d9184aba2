/**
 * Writes the Argo CD health checks of the operator's kinds: one self-contained script
 * per kind, deploy/argocd/health/<kind>.lua, and deploy/argocd/argocd-cm-patch.yaml,
 * the argocd-cm snippet that installs them. Each script is assembled from
 * deploy/argocd/health/src/common.lua, the logic every kind shares, and
 * deploy/argocd/health/src/<kind>.lua, which defines the kind's `kindRule` (one per
 * kind of src/crds: a kind without one, or a source of no kind, fails the generator).
 * The list of the kind's terminal reasons is generated from src/crds/reasons.ts.
 * `--check` fails when a script or the snippet is stale, missing or extra.
 *
 *   tsx scripts/generate-argocd.ts [--check]
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { stringify } from "yaml";
import { allCrds, terminalReasonsOf } from "../src/crds/index.js";
import {
  checkMode,
  type GeneratedFiles,
  generatedHeader,
  reportGenerated,
  root,
  syncGeneratedFiles,
} from "./generated-files.js";

/** Where the generated health scripts are, one `<kind in lower case>.lua` per kind. */
export const HEALTH_DIR = "deploy/argocd/health";
/** Where their sources are: COMMON_SOURCE and one `<kind in lower case>.lua` per kind. */
export const HEALTH_SOURCE_DIR = `${HEALTH_DIR}/src`;
/** The template every kind's script is made from. */
export const COMMON_SOURCE = `${HEALTH_SOURCE_DIR}/common.lua`;
/** The generated argocd-cm snippet. */
export const ARGOCD_CM_PATCH = "deploy/argocd/argocd-cm-patch.yaml";

/** The line of COMMON_SOURCE that a kind's source replaces. */
const KIND_RULE_LINE = /^-- @KIND_RULE@.*\n/gm;
/** A placeholder of COMMON_SOURCE (`@GROUP@`, `@KIND@`, `@TERMINAL_REASONS@`). */
const PLACEHOLDER = /@[A-Z_]+@/g;

/** The argocd-cm key of a kind's health check. */
export function healthKey(group: string, kind: string): string {
  return `resource.customizations.health.${group}_${kind}`;
}

/**
 * The body of the Lua set of a kind's Terminal reasons, from src/crds/reasons.ts (one
 * `["Reason"] = true,` line each).
 */
export function terminalReasonsTable(kind: string): string {
  const reasons = terminalReasonsOf(kind);
  if (reasons.length === 0) throw new Error(`${kind}: no Terminal reason in src/crds/reasons.ts`);
  return reasons.map((r) => `  ["${r}"] = true,`).join("\n");
}

/** The file name of a kind's script and of its source. */
function scriptName(kind: string): string {
  return `${kind.toLowerCase()}.lua`;
}

function readSource(path: string): string {
  const abs = join(root, path);
  if (!existsSync(abs)) throw new Error(`${path}: missing`);
  const text = readFileSync(abs, "utf8");
  return text.endsWith("\n") ? text : `${text}\n`;
}

/**
 * The health script of a kind: COMMON_SOURCE with its placeholders filled in and its
 * `-- @KIND_RULE@` line replaced by `kindSource`, under the generated-file header.
 */
export function assembleHealthScript(
  group: string,
  kind: string,
  common: string,
  kindSource: string,
  kindSourcePath: string,
): string {
  const rules = common.match(KIND_RULE_LINE)?.length ?? 0;
  if (rules !== 1) {
    throw new Error(`${COMMON_SOURCE}: needs one \`-- @KIND_RULE@\` line, has ${rules}`);
  }
  const filled = common.replace(KIND_RULE_LINE, () => kindSource.replace(/\n*$/, "\n"));
  const body = filled.replace(PLACEHOLDER, (p) => {
    if (p === "@GROUP@") return group;
    if (p === "@KIND@") return kind;
    if (p === "@TERMINAL_REASONS@") return terminalReasonsTable(kind);
    throw new Error(`${COMMON_SOURCE} or ${kindSourcePath}: unknown placeholder ${p}`);
  });
  const header = generatedHeader(
    "scripts/generate-argocd.ts",
    `${COMMON_SOURCE} and ${kindSourcePath}`,
    "--",
  );
  return `${header}${body}`;
}

/** The health scripts by argocd-cm key, in the order of src/crds, with their paths. */
export function healthScripts(): Map<string, { path: string; script: string }> {
  const common = readSource(COMMON_SOURCE);
  const scripts = new Map<string, { path: string; script: string }>();
  const expected = new Set<string>([COMMON_SOURCE.slice(HEALTH_SOURCE_DIR.length + 1)]);
  for (const crd of allCrds) {
    const file = scriptName(crd.kind);
    expected.add(file);
    const sourcePath = `${HEALTH_SOURCE_DIR}/${file}`;
    if (!existsSync(join(root, sourcePath))) {
      throw new Error(`${sourcePath}: missing health check of ${crd.kind}`);
    }
    const script = assembleHealthScript(
      crd.group,
      crd.kind,
      common,
      readSource(sourcePath),
      sourcePath,
    );
    scripts.set(healthKey(crd.group, crd.kind), { path: `${HEALTH_DIR}/${file}`, script });
  }
  for (const file of readdirSync(join(root, HEALTH_SOURCE_DIR))) {
    if (file.endsWith(".lua") && !expected.has(file)) {
      throw new Error(`${HEALTH_SOURCE_DIR}/${file}: no kind of src/crds has this name`);
    }
  }
  return scripts;
}

/** The content of the argocd-cm snippet, holding `scripts` (by argocd-cm key). */
export function argocdConfigMapPatch(scripts: Map<string, string>): string {
  const header = generatedHeader("scripts/generate-argocd.ts", `${HEALTH_SOURCE_DIR}/*.lua`);
  const usage = [
    "# Merge into Argo CD's argocd-cm, e.g.",
    "#   kubectl -n argocd patch configmap argocd-cm --type merge --patch-file deploy/argocd/argocd-cm-patch.yaml",
    "# or list it under `patches:` of the kustomization that installs Argo CD (docs/argocd.md).",
  ].join("\n");
  const body = stringify(
    {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: {
        name: "argocd-cm",
        namespace: "argocd",
        labels: { "app.kubernetes.io/name": "argocd-cm", "app.kubernetes.io/part-of": "argocd" },
      },
      data: Object.fromEntries(scripts),
    },
    { lineWidth: 0, blockQuote: "literal" },
  );
  return `${header}${usage}\n${body}`;
}

/** Every file this generator owns: the per-kind scripts and the argocd-cm snippet. */
export function argocdFiles(): GeneratedFiles {
  const scripts = healthScripts();
  const files: GeneratedFiles = new Map();
  for (const { path, script } of scripts.values()) files.set(path, script);
  files.set(
    ARGOCD_CM_PATCH,
    argocdConfigMapPatch(new Map([...scripts].map(([key, { script }]) => [key, script]))),
  );
  return files;
}

if (import.meta.main) {
  const check = checkMode();
  const problems = syncGeneratedFiles(
    argocdFiles(),
    [{ dir: HEALTH_DIR, pattern: /\.lua$/ }],
    check,
  );
  reportGenerated("generate-argocd", problems, check);
}
