/**
 * Writes deploy/argocd/argocd-cm-patch.yaml, the argocd-cm snippet that installs the
 * Argo CD health checks of the operator's kinds, from deploy/argocd/health/<kind>.lua
 * (one per kind of src/crds: a kind without a script fails the generator). `--check`
 * fails when the snippet is stale.
 *
 *   tsx scripts/generate-argocd.ts [--check]
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { stringify } from "yaml";
import { allCrds } from "../src/crds/index.js";
import {
  checkMode,
  generatedHeader,
  reportGenerated,
  root,
  syncGeneratedFiles,
} from "./generated-files.js";

/** Where the health scripts are, one `<kind in lower case>.lua` per kind. */
export const HEALTH_DIR = "deploy/argocd/health";
/** The generated argocd-cm snippet. */
export const ARGOCD_CM_PATCH = "deploy/argocd/argocd-cm-patch.yaml";

/** The argocd-cm key of a kind's health check. */
export function healthKey(group: string, kind: string): string {
  return `resource.customizations.health.${group}_${kind}`;
}

/** The health scripts by argocd-cm key, in the order of src/crds. */
export function healthScripts(): Map<string, string> {
  const scripts = new Map<string, string>();
  const expected = new Set<string>();
  for (const crd of allCrds) {
    const file = `${crd.kind.toLowerCase()}.lua`;
    expected.add(file);
    const path = join(root, HEALTH_DIR, file);
    if (!existsSync(path))
      throw new Error(`${HEALTH_DIR}/${file}: missing health check of ${crd.kind}`);
    scripts.set(healthKey(crd.group, crd.kind), readFileSync(path, "utf8"));
  }
  for (const file of readdirSync(join(root, HEALTH_DIR))) {
    if (file.endsWith(".lua") && !expected.has(file)) {
      throw new Error(`${HEALTH_DIR}/${file}: no kind of src/crds has this name`);
    }
  }
  return scripts;
}

/** The content of the argocd-cm snippet. */
export function argocdConfigMapPatch(): string {
  const header = generatedHeader("scripts/generate-argocd.ts", `${HEALTH_DIR}/*.lua`);
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
      data: Object.fromEntries(healthScripts()),
    },
    { lineWidth: 0, blockQuote: "literal" },
  );
  return `${header}${usage}\n${body}`;
}

if (import.meta.main) {
  const check = checkMode();
  const problems = syncGeneratedFiles(
    new Map([[ARGOCD_CM_PATCH, argocdConfigMapPatch()]]),
    [],
    check,
  );
  reportGenerated("generate-argocd", problems, check);
}
