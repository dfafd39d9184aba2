import type { Logger } from "pino";
import { isNotFound } from "./kube-errors.js";

/** A kind of the cache not listed yet, with the last error of its list if one failed. */
export interface UnsyncedKind {
  kind: string;
  error?: unknown;
}

/** What the report reads of the informer cache (cache.ts). */
export interface SyncingCache {
  /** None once every kind has listed. */
  unsynced(): UnsyncedKind[];
}

/** Options of {@link reportCacheSync}. */
export interface CacheSyncReportOptions {
  log: Logger;
  /** Past this with kinds not listed, `onTimeout` is called; 0: never. */
  timeoutMs: number;
  /** Told why the cache did not sync; the manager fails, so the process exits. */
  onTimeout: (message: string) => void;
  /** The first report's delay, doubling up to `maxStepMs` (the informers' backoff). Default 1 s. */
  firstStepMs?: number;
  /** Default 30 s. */
  maxStepMs?: number;
}

/**
 * Reports the cache's first sync at start. While kinds are not listed (an API server
 * that does not answer, a kind the operator may not list), one line per backoff step
 * (1 s, 2 s, 4 s … 30 s) names them and why, for the whole cache (the informers leave
 * their failures before a first list to it): a warning once a list failed, else news
 * that lists are still under way; past `timeoutMs` (controller-runtime's
 * CacheSyncTimeout, 2 min) `onTimeout` is called, so that the pod restarts where one
 * can see it instead of staying unready. Returns a function that ends the report.
 */
export function reportCacheSync(cache: SyncingCache, options: CacheSyncReportOptions): () => void {
  const started = Date.now();
  const maxStepMs = options.maxStepMs ?? 30_000;
  let step = options.firstStepMs ?? 1_000;
  let reported = false;
  let timer: NodeJS.Timeout | undefined;
  const tick = () => {
    const waitedMs = Date.now() - started;
    const unsynced = cache.unsynced();
    if (unsynced.length === 0) {
      if (reported) options.log.info({ waitedMs }, "the cache has synced");
      return;
    }
    const why = syncSummary(unsynced);
    if (options.timeoutMs > 0 && waitedMs >= options.timeoutMs) {
      options.onTimeout(
        `the cache did not sync within ${options.timeoutMs} ms (${why}); exiting so that the pod restarts`,
      );
      return;
    }
    reported = true;
    // Lists merely slow (a large cluster, a loaded API server) are news, not a warning.
    const failing = unsynced.some((k) => k.error !== undefined);
    const line = { waitedMs, notSynced: why };
    if (failing) options.log.warn(line, "the cache has not synced; retrying");
    else options.log.info(line, "the cache is still listing");
    step = Math.min(step * 2, maxStepMs);
    const untilTimeout = options.timeoutMs > 0 ? options.timeoutMs - waitedMs : step;
    timer = setTimeout(tick, Math.min(step, untilTimeout));
  };
  timer = setTimeout(tick, Math.min(step, options.timeoutMs > 0 ? options.timeoutMs : step));
  return () => clearTimeout(timer);
}

/**
 * The kinds not listed and why, grouped by error, for /readyz and the log:
 * `not synced: a, b (connect ECONNREFUSED 10.96.0.1:443); c`.
 */
export function syncSummary(kinds: readonly UnsyncedKind[]): string {
  const byError = new Map<string, string[]>();
  for (const { kind, error } of kinds) {
    const why = error === undefined ? "" : errorText(error);
    byError.set(why, [...(byError.get(why) ?? []), kind]);
  }
  const parts = [...byError].map(([why, names]) => `${names.join(", ")}${why ? ` (${why})` : ""}`);
  return `not synced: ${parts.join("; ")}`;
}

function errorText(error: unknown): string {
  // A list answered 404 is of a kind the API server does not serve: one line for them all.
  if (isNotFound(error))
    return "404: the API server does not serve these kinds; are the CRDs installed?";
  return error instanceof Error ? error.message : String(error);
}
