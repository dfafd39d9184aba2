/**
 * What a large fleet at idle costs a connection and a new object: the idle service
 * call rate of each account (tenant) against the routine budget, and probe creates
 * (NasVolumes created one at a time, each waited Ready) whose create-to-Ready times
 * are compared between an empty operator and the same operator at idle.
 */
import { sleep } from "../support/operator-process.js";
import type { BenchEnvironment } from "./environment.js";
import { type LatencyFigures, latencyFigures, type ReadyTracker } from "./ready-tracker.js";
import { NAS, nasName, nasVolume } from "./workload.js";

/**
 * Creates `count` NasVolumes `<prefix>-nas-<i>` one after the other, each waited Ready
 * (at most `timeoutMs`) before the next; resolves with their create-to-Ready figures,
 * or null when `count` is 0. Throws when one is not Ready in time.
 */
export async function probeCreates(
  env: BenchEnvironment,
  tracker: ReadyTracker,
  namespace: string,
  prefix: string,
  count: number,
  timeoutMs = 120_000,
): Promise<LatencyFigures | null> {
  if (count === 0) return null;
  const names: string[] = [];
  for (let i = 0; i < count; i++) {
    const name = nasName(prefix, i);
    names.push(name);
    tracker.markApplied(name);
    await env.kube.create(NAS, nasVolume(namespace, prefix, i));
    const deadline = Date.now() + timeoutMs;
    while (tracker.notReady([name]).length > 0) {
      if (Date.now() > deadline) throw new Error(`probe ${name} not Ready in ${timeoutMs} ms`);
      await sleep(20);
    }
  }
  return latencyFigures(tracker.latencies(names));
}

/** The idle service calls of one account against its routine budget. */
export interface IdleRate {
  calls: number;
  callsPerSecond: number;
  /** service.routineCallShare × the connection's rate limit, calls per second. */
  routineBudgetPerSecond: number | null;
  /**
   * `callsPerSecond` ≤ the budget, allowing the routine bucket's burst (share × burst)
   * once over the window.
   */
  withinBudget: boolean | null;
}

/**
 * The service calls logged between `from` and `to` (request-log seqs) over `windowMs`,
 * per account (tenant), against `budget` (calls per second and the routine burst).
 */
export function idleRates(
  env: BenchEnvironment,
  from: number,
  to: number,
  windowMs: number,
  budget?: { perSecond: number; burst: number },
): Record<string, IdleRate> {
  const calls: Record<string, number> = {};
  for (const e of env.emulator.requestLog.read({ since: from })) {
    if (e.seq > to) break;
    const k = e.tenant ?? "(refused key)";
    calls[k] = (calls[k] ?? 0) + 1;
  }
  const seconds = Math.max(1, windowMs) / 1000;
  return Object.fromEntries(
    Object.entries(calls).map(([tenant, n]) => [
      tenant,
      {
        calls: n,
        callsPerSecond: Math.round((n / seconds) * 100) / 100,
        routineBudgetPerSecond: budget?.perSecond ?? null,
        withinBudget: budget ? n <= budget.perSecond * seconds + budget.burst : null,
      },
    ]),
  );
}
