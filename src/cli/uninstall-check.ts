import type { Command } from "commander";
import { namespaceName } from "../config/schema.js";
import { commaList } from "../config/settings.js";
import { allCrds, type CrdDefinition } from "../crds/index.js";
import { ExponentialBackoff } from "../runtime/fair-lanes.js";
import { KubeClient } from "../runtime/kube.js";
import { KUBECONFIG_SEARCH, loadKubeConfig } from "../runtime/kube-config.js";
import { isNotFound, statusCodeOf } from "../runtime/kube-errors.js";
import { formatKey, type KubeObject } from "../runtime/resource.js";

/** Options of {@link remainingCustomResources}. */
export interface UninstallCheckOptions {
  /** Where to look; empty: every namespace. */
  namespaces: readonly string[];
  /** Waits before a retry. Default a timer (tests pass their own). */
  sleep?: (ms: number) => Promise<void>;
  /** The clock of the retry deadline, ms since the epoch. Default `Date.now`. */
  now?: () => number;
}

/**
 * Retries of a list an API server answers with 429 or 5xx while it (or the CRD's
 * storage) starts: from 250 ms doubling up to 4 s, for up to 30 s.
 */
const LIST_RETRY = { baseMs: 250, maxMs: 4_000, deadlineMs: 30_000 };

/**
 * The operator's custom resources that still exist (`Kind namespace/name`, `Kind name`
 * for a cluster-scoped kind), in the watched namespaces and at the cluster scope. A kind whose CRD is gone has none.
 */
export async function remainingCustomResources(
  kube: KubeClient,
  options: UninstallCheckOptions,
): Promise<string[]> {
  // A misspelt namespace holds nothing, so it would say "none left": refuse it instead.
  const bad = options.namespaces.filter((n) => !namespaceName.safeParse(n).success);
  if (bad.length > 0) {
    throw new Error(`not a namespace name (a lower-case DNS label): ${bad.join(", ")}`);
  }
  const found: string[] = [];
  const watched = options.namespaces.length > 0 ? options.namespaces : [undefined];
  for (const crd of allCrds) {
    // A cluster-scoped kind (ServiceConnection) is listed once, whatever is watched.
    const scopes = crd.namespaced ? watched : [undefined];
    for (const namespace of scopes) {
      const items = await listRetrying(kube, crd, namespace, options);
      for (const o of items) {
        // A ServiceConnection holds a finalizer only while objects use it; one without
        // is deleted with the release (the chart's own connection) and blocks nothing.
        if (!crd.namespaced && (o.metadata?.finalizers ?? []).length === 0) continue;
        const key = { namespace: o.metadata?.namespace ?? "", name: o.metadata?.name ?? "" };
        found.push(`${crd.kind} ${formatKey(key)}`);
      }
    }
  }
  return found;
}

/**
 * The objects of a kind (none when its CRD is gone), retrying 429 and 5xx with the
 * runtime's exponential backoff ({@link LIST_RETRY}).
 */
async function listRetrying(
  kube: KubeClient,
  crd: CrdDefinition,
  namespace: string | undefined,
  options: UninstallCheckOptions,
): Promise<KubeObject[]> {
  const { sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms)), now = Date.now } =
    options;
  const deadline = now() + LIST_RETRY.deadlineMs;
  const backoff = new ExponentialBackoff(LIST_RETRY);
  for (;;) {
    try {
      return (await kube.list(crd, namespace)).items;
    } catch (err) {
      if (isNotFound(err)) return [];
      const code = statusCodeOf(err);
      const transient = code === 429 || (code !== undefined && code >= 500);
      const delay = backoff.when(crd.plural);
      if (!transient || now() + delay > deadline) throw err;
      await sleep(delay);
    }
  }
}

/** The message of a refused uninstall: what remains and what to do. */
export function refusalMessage(remaining: readonly string[]): string {
  const shown = remaining.slice(0, 20);
  const more = remaining.length - shown.length;
  return [
    `uninstall refused: ${remaining.length} custom resource(s) of aidc-operator still exist:`,
    ...shown.map((r) => `  ${r}`),
    ...(more > 0 ? [`  ... and ${more} more`] : []),
    "Without the operator their finalizers are never removed (they stay Terminating), and",
    "with deletionPolicy: Delete their remote resources are never deleted. Delete them first",
    "and wait until they are gone (a paused object's deletion waits until it is resumed),",
    "then uninstall again (the category aidc holds every kind users create):",
    "  kubectl annotate aidc --all -A aidc.io/paused-",
    "  kubectl delete aidc --all -A --wait",
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
    .option("--kubeconfig <path>", `kubeconfig (default: ${KUBECONFIG_SEARCH})`)
    .action(async (flags: { namespaces: string; kubeconfig?: string }) => {
      const config = await loadKubeConfig(flags.kubeconfig ? { kubeconfig: flags.kubeconfig } : {});
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
