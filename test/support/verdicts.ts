import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { parse } from "yaml";
import { ARGOCD_CM_PATCH, healthKey } from "../../scripts/generate-argocd.js";
import { root } from "../../scripts/generated-files.js";
import { GROUP } from "../../src/crds/index.js";
import type { KubeObject } from "../../src/runtime/resource.js";
import { kstatusOf } from "./kstatus.js";
import { runHealthScript } from "./lua.js";

/**
 * What GitOps tools make of objects of the operator: kstatus itself (fluxcd/cli-utils,
 * as Flux and kpt run it; tools/kstatus) and the generated Argo CD health script of
 * each object's kind (Lua 5.1, as Argo CD runs it). test/integration/health-verdicts.test.ts
 * judges every kind's states in one table; a kind may judge its own in its own test
 * with {@link verdictsOf} instead (test/integration/<kind>*.test.ts), which the table's
 * coverage check accepts.
 */

/** The verdicts on one object. */
export interface Verdict {
  /** kstatus's status: Current, InProgress, Failed, Terminating, … */
  kstatus: string | undefined;
  /** Argo CD's health: Healthy, Progressing, Degraded, Suspended, … */
  argocd: string;
}

/** The verdicts of kstatus and of the Argo CD health scripts on `objects`, in order. */
export function verdictsOf(objects: readonly KubeObject[]): Verdict[] {
  const patch = parse(readFileSync(join(root, ARGOCD_CM_PATCH), "utf8")) as {
    data: Record<string, string>;
  };
  const kstatus = kstatusOf(objects);
  return objects.map((obj, i) => ({
    kstatus: kstatus[i]?.status,
    argocd: runHealthScript(patch.data[healthKey(GROUP, obj.kind ?? "")] ?? "", obj).status,
  }));
}

/** The lower-case kinds whose own integration test calls {@link verdictsOf}. */
export function kindsJudgedInTheirOwnTests(): Set<string> {
  const dir = join(root, "test/integration");
  const judged = new Set<string>();
  for (const file of readdirSync(dir)) {
    const m = /^([a-z0-9]+)(?:-[\w-]+)?\.test\.ts$/.exec(file);
    if (!m?.[1] || file === "health-verdicts.test.ts") continue;
    if (/\bverdictsOf\(/.test(readFileSync(join(dir, file), "utf8"))) judged.add(m[1]);
  }
  return judged;
}
