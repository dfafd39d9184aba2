import type { Logger } from "pino";
import { frontAnswerOf, isNotFound, statusCodeOf } from "./kube-errors.js";

/** A kind of the cache held back (not listed, or not watching), with the error of its last list or watch. */
export interface UnsyncedKind {
  kind: string;
  error?: unknown;
}

/** A kind of the cache: whether it has listed, and the error of its last list or watch until its watch is answered again. */
export interface CachedKind extends UnsyncedKind {
  synced: boolean;
}

/** What the report reads of the informer cache (cache.ts). */
export interface SyncingCache {
  kinds(): CachedKind[];
}

/** Why the cache has not synced (`not synced: <kinds> (<error>)`, for /readyz), or undefined once it has. */
export function notSynced(cache: SyncingCache): string | undefined {
  const unsynced = cache.kinds().filter((k) => !k.synced);
  return unsynced.length === 0 ? undefined : syncSummary(unsynced);
}

/** Options of {@link reportCache}. */
export interface CacheReportOptions {
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

/** What the informers tell the report (the manager wires them), and its end. */
export interface CacheReport {
  /** A list or watch failed, or a watch was answered after one (the informers' `onWatchChange`). */
  watchesChanged(): void;
  /** Ends the report. */
  end(): void;
}

/**
 * While only 429s (the API server pacing its clients) hold the kinds back, this long
 * they are news, not a warning: client-go logs them at info while they pass.
 */
const PACED_QUIET_MS = 15_000;

/**
 * Reports for the whole cache what its informers leave to it (they log their failures
 * at debug): one line per backoff step (1 s, 2 s, 4 s … 30 s) names the kinds held back
 * and why. At start, while kinds are not listed (an API server that does not answer, a
 * kind the operator may not list): a warning once a list failed, else news that lists
 * are still under way; past `timeoutMs` (controller-runtime's CacheSyncTimeout, 2 min)
 * `onTimeout` is called, so that the pod restarts where one can see it instead of
 * staying unready. Once synced, from a failed list or watch while watches are not
 * answered again (the API server or a proxy on the way down): a warning per step naming
 * the kinds, and one line as soon as every watch is back, with how long it lasted. A
 * failure mended before the first step says nothing.
 */
export function reportCache(cache: SyncingCache, options: CacheReportOptions): CacheReport {
  const firstStepMs = options.firstStepMs ?? 1_000;
  const maxStepMs = options.maxStepMs ?? 30_000;
  let timer: NodeJS.Timeout | undefined;
  let ended = false;
  let synced = false;
  /** While watches fail after the sync: when it began, and whether a line said so. */
  let outage: { since: number; said: boolean } | undefined;

  /** Calls `tick` with the time since now at each step until it answers false. */
  const steps = (tick: (waitedMs: number) => boolean, boundMs = 0) => {
    const started = Date.now();
    let step = firstStepMs;
    let due = 0;
    const next = (ms: number) => {
      const delay = boundMs > 0 ? Math.min(ms, boundMs - (Date.now() - started)) : ms;
      due = Date.now() - started + delay;
      timer = setTimeout(run, delay);
    };
    const run = () => {
      // A timer counts from the event loop's cached time, so by Date.now() it may fire a
      // little early (tens of ms on a loaded machine): its step counts as reached.
      if (ended || !tick(Math.max(Date.now() - started, due))) return;
      step = Math.min(step * 2, maxStepMs);
      next(step);
    };
    next(step);
  };

  let reported = false;
  steps((waitedMs) => {
    const unsynced = cache.kinds().filter((k) => !k.synced);
    if (unsynced.length === 0) {
      if (reported) options.log.info({ waitedMs }, "the cache has synced");
      synced = true;
      watchesChanged();
      return false;
    }
    const why = syncSummary(unsynced);
    if (options.timeoutMs > 0 && waitedMs >= options.timeoutMs) {
      options.onTimeout(
        `the cache did not sync within ${options.timeoutMs} ms (${why}); exiting so that the pod restarts`,
      );
      return false;
    }
    reported = true;
    const line = { waitedMs, notSynced: why };
    if (isWarning(unsynced, waitedMs)) options.log.warn(line, "the cache has not synced; retrying");
    else options.log.info(line, "the cache is still listing");
    return true;
  }, options.timeoutMs);

  function watchesChanged(): void {
    if (!synced || ended) return;
    const down = cache.kinds().filter((k) => k.error !== undefined);
    if (outage && down.length === 0) {
      const downMs = Date.now() - outage.since;
      if (outage.said) options.log.info({ downMs }, "the cache's watches are back");
      outage = undefined;
      clearTimeout(timer);
    }
    if (outage || down.length === 0) return;
    const current = { since: Date.now(), said: false };
    outage = current;
    steps((downMs) => {
      const down = cache.kinds().filter((k) => k.error !== undefined);
      if (down.length === 0) {
        watchesChanged();
        return false;
      }
      current.said = true;
      const line = { downMs, notWatching: syncSummary(down, "not watching") };
      if (isWarning(down, downMs)) options.log.warn(line, "the cache's watches failed; retrying");
      else options.log.info(line, "the API server is pacing the cache's watches");
      return true;
    });
  }
  return {
    watchesChanged,
    end: () => {
      ended = true;
      clearTimeout(timer);
    },
  };
}

/**
 * A warning once a kind's list or watch failed, unless only 429s held them back for
 * less than {@link PACED_QUIET_MS}: lists merely slow (a large cluster, a loaded API
 * server) and pacing that passes are news.
 */
function isWarning(kinds: readonly UnsyncedKind[], waitedMs: number): boolean {
  const failed = kinds.filter((k) => k.error !== undefined);
  const paced = failed.every((k) => statusCodeOf(k.error) === 429) && waitedMs < PACED_QUIET_MS;
  return failed.length > 0 && !paced;
}

/**
 * The kinds held back and why, grouped by error, for /readyz and the log:
 * `not synced: a, b (connect ECONNREFUSED 10.96.0.1:443); c`.
 */
export function syncSummary(kinds: readonly UnsyncedKind[], label = "not synced"): string {
  const byError = new Map<string, string[]>();
  for (const { kind, error } of kinds) {
    const why = error === undefined ? "" : errorText(error);
    byError.set(why, [...(byError.get(why) ?? []), kind]);
  }
  const parts = [...byError].map(([why, names]) => `${names.join(", ")}${why ? ` (${why})` : ""}`);
  return `${label}: ${parts.join("; ")}`;
}

function errorText(error: unknown): string {
  // A front's own answer (kube-errors.ts) is the same for every kind: one line for them all.
  const front = frontAnswerOf(error);
  if (front !== undefined) return front;
  // A list the API server answered 404 is of a kind it does not serve: one line for them all.
  if (isNotFound(error))
    return "404: the API server does not serve these kinds; are the CRDs installed?";
  return error instanceof Error ? error.message : String(error);
}
