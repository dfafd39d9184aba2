import * as k8s from "@kubernetes/client-node";
import type { Command } from "commander";
import { commaList } from "../config/settings.js";
import { allCrds, type CrdDefinition } from "../crds/index.js";
import { isNotFound, KubeClient, statusCodeOf } from "../runtime/kube.js";
import type { KubeObject } from "../runtime/resource.js";

/** Options of {@link remainingCustomResources}. */
export interface UninstallCheckOptions {
  /** Where to look; empty: every namespace. */
  namespaces: readonly string[];
}

/**
 * The operator's custom resources that still exist (`Kind namespace/name`), in the
 * watched namespaces. A kind whose CRD is gone has none.
 */
export async function remainingCustomResources(
  kube: KubeClient,
  options: UninstallCheckOptions,
): Promise<string[]> {
  const found: string[] = [];
  const scopes = options.namespaces.length > 0 ? options.namespaces : [undefined];
  for (const crd of allCrds) {
    for (const namespace of scopes) {
      const items = await listRetrying(kube, crd, namespace);
      for (const o of items) {
        found.push(`${crd.kind} ${o.metadata?.namespace}/${o.metadata?.name}`);
      }
    }
  }
  return found;
}

/**
 * The objects of a kind (none when its CRD is gone), retrying for up to 30 s what an API
 * server answers while it (or the CRD's storage) starts: 429 and 5xx.
 */
async function listRetrying(
  kube: KubeClient,
  crd: CrdDefinition,
  namespace: string | undefined,
): Promise<KubeObject[]> {
  const deadline = Date.now() + 30_000;
  for (let delay = 250; ; delay = Math.min(delay * 2, 4_000)) {
    try {
      return (await kube.list(crd, namespace)).items;
    } catch (err) {
      if (isNotFound(err)) return [];
      const code = statusCodeOf(err);
      const transient = code === 429 || (code !== undefined && code >= 500);
      if (!transient || Date.now() + delay > deadline) throw err;
      await new Promise((r) => setTimeout(r, delay));
    }
  }
}

/** The message of a refused uninstall: what remains and what to do. */
export function refusalMessage(remaining: readonly string[]): string {
  const shown = remaining.slice(0, 20);
  const more = remaining.length - shown.length;
  const kinds = allCrds.map((c) => c.plural).join(",");
  return [
    `uninstall refused: ${remaining.length} custom resource(s) of aidc-operator still exist:`,
    ...shown.map((r) => `  ${r}`),
    ...(more > 0 ? [`  ... and ${more} more`] : []),
    "Without the operator their finalizers are never removed (they stay Terminating), and",
    "with deletionPolicy: Delete their remote resources are never deleted. Delete them first",
    "and wait until they are gone, then uninstall again:",
    `  kubectl delete ${kinds} --all -A --wait`,
    "To uninstall anyway and leave them (and their remote resources) as they are:",
    "  helm uninstall <release> --no-hooks",
  ].join("\n");
}

/**
 * `aidc-operator uninstall-check`: the chart's pre-delete hook. Exits 1, listing them,
 * while custom resources exist in the watched namespaces, so that `helm uninstall`
 * stops before it removes the operator that must finalize them; 0 when none is left.
 */
export function registerUninstallCheckCommand(program: Command): void {
  program
    .command("uninstall-check")
    .description("exit 1 while the operator's custom resources exist (the chart's pre-delete hook)")
    .option("--namespaces <list>", "comma-separated namespaces to look in (default: all)", "")
    .option("--kubeconfig <path>", "kubeconfig (default: in-cluster, $KUBECONFIG, ~/.kube/config)")
    .action(async (flags: { namespaces: string; kubeconfig?: string }) => {
      const config = new k8s.KubeConfig();
      if (flags.kubeconfig) config.loadFromFile(flags.kubeconfig);
      else config.loadFromDefault();
      const namespaces = commaList(flags.namespaces);
      const remaining = await remainingCustomResources(new KubeClient(config), { namespaces });
      if (remaining.length > 0) {
        process.stderr.write(`${refusalMessage(remaining)}\n`);
        process.exitCode = 1;
        return;
      }
      process.stdout.write("no custom resource of aidc-operator is left: uninstall may proceed\n");
    });
}
