/**
 * Writes the Argo CD health checks of the operator's kinds: one self-contained script
 * per kind, deploy/argocd/health/<kind>.lua, and deploy/argocd/argocd-cm-patch.yaml,
 * the argocd-cm snippet that installs them. Every script is
 * deploy/argocd/health/src/common.lua, the logic every kind shares, with the kind's
 * lists filled in from src/crds: its Terminal and Resting reasons from the reason table
 * (`REASONS`) and its own states from the `health` of its CrdDefinition. Nothing is
 * written by hand per kind: a new kind gets its script from `npm run generate`.
 * `--check` fails when a script or the snippet is stale, missing or extra.
 *
 *   tsx scripts/generate-argocd.ts [--check]
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { stringify } from "yaml";
import {
  allCrds,
  type CrdDefinition,
  catalogCrds,
  REASONS,
  type ReasonTable,
} from "../src/crds/index.js";
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
/** Where their one source is. */
export const HEALTH_SOURCE_DIR = `${HEALTH_DIR}/src`;
/** The template every kind's script is made from. */
export const COMMON_SOURCE = `${HEALTH_SOURCE_DIR}/common.lua`;
/** The generated argocd-cm snippet. */
export const ARGOCD_CM_PATCH = "deploy/argocd/argocd-cm-patch.yaml";

/** A placeholder of COMMON_SOURCE (`@GROUP@`, `@KIND@`, `@TERMINAL_REASONS@`, …). */
const PLACEHOLDER = /@[A-Z_]+@/g;

/** The argocd-cm key of a kind's health check. */
export function healthKey(group: string, kind: string): string {
  return `resource.customizations.health.${group}_${kind}`;
}

/** A Lua string literal (the kinds' reasons and states are plain text). */
function luaString(text: string): string {
  return `"${text.replace(/[\\"]/g, (c) => `\\${c}`).replace(/\n/g, "\\n")}"`;
}

/** The body of a Lua set of reasons (one `["Reason"] = true,` line each). */
function luaSet(reasons: readonly string[]): string {
  return reasons.map((r) => `  [${luaString(r)}] = true,`).join("\n");
}

/**
 * The body of the Lua set of a kind's Terminal reasons, from the reason table (one
 * `["Reason"] = true,` line each).
 */
export function terminalReasonsTable(kind: string, table: ReasonTable = REASONS): string {
  const reasons = table.reasonsOf(kind, "Terminal");
  if (reasons.length === 0) throw new Error(`${kind}: no Terminal reason in the reason table`);
  return luaSet(reasons);
}

/** The body of the Lua table of a kind's own states (`health` of its CrdDefinition). */
export function kindStatesTable(crd: Pick<CrdDefinition, "health">): string {
  const states = Object.entries(crd.health?.states ?? {});
  return states
    .map(([value, s]) => `  [${luaString(value)}] = { "${s.health}", ${luaString(s.message)} },`)
    .join("\n");
}

/** The file name of a kind's script. */
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
 * The health script of a kind: COMMON_SOURCE with its placeholders filled in from the
 * kind's definition and the reason table (`REASONS` of src/crds unless given), under the
 * generated-file header.
 */
export function assembleHealthScript(
  crd: Pick<CrdDefinition, "group" | "kind" | "health">,
  common: string,
  table: ReasonTable = REASONS,
): string {
  const field = crd.health?.field ?? "phase";
  if (!/^[A-Za-z][A-Za-z0-9]*$/.test(field)) {
    throw new Error(`${crd.kind}: health.field ${field} is not a plain status field name`);
  }
  const body = common.replace(PLACEHOLDER, (p) => {
    if (p === "@GROUP@") return crd.group;
    if (p === "@KIND@") return crd.kind;
    if (p === "@TERMINAL_REASONS@") return terminalReasonsTable(crd.kind, table);
    if (p === "@RESTING_REASONS@") return luaSet(table.reasonsOf(crd.kind, "Resting"));
    if (p === "@STATE_FIELD@") return field;
    if (p === "@KIND_STATES@") return kindStatesTable(crd);
    throw new Error(`${COMMON_SOURCE}: unknown placeholder ${p}`);
  });
  const header = generatedHeader(
    "scripts/generate-argocd.ts",
    `${COMMON_SOURCE}, the reason table and the CrdDefinition of ${crd.kind}`,
    "--",
  );
  return `${header}${body}`;
}

/**
 * The kinds with a health script: all but the catalogs, which have no conditions and
 * which the operator writes (no Application holds them; Argo CD gives a resource
 * without a script no health).
 */
export const HEALTH_KINDS: readonly CrdDefinition[] = allCrds.filter(
  (crd) => !catalogCrds.includes(crd),
);

/** The health scripts by argocd-cm key, in the order of src/crds, with their paths. */
export function healthScripts(): Map<string, { path: string; script: string }> {
  const common = readSource(COMMON_SOURCE);
  const scripts = new Map<string, { path: string; script: string }>();
  for (const crd of HEALTH_KINDS) {
    const file = scriptName(crd.kind);
    const script = assembleHealthScript(crd, common);
    scripts.set(healthKey(crd.group, crd.kind), { path: `${HEALTH_DIR}/${file}`, script });
  }
  for (const file of readdirSync(join(root, HEALTH_SOURCE_DIR))) {
    if (file !== "common.lua") {
      throw new Error(
        `${HEALTH_SOURCE_DIR}/${file}: not used; a kind's own states are the \`health\` of its CrdDefinition in src/crds`,
      );
    }
  }
  return scripts;
}

/** The content of the argocd-cm snippet, holding `scripts` (by argocd-cm key). */
export function argocdConfigMapPatch(scripts: Map<string, string>): string {
  const header = generatedHeader("scripts/generate-argocd.ts", `${COMMON_SOURCE} and src/crds`);
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
