import type { Logger } from "pino";
import { DEFAULT_LEASE_TIMINGS } from "./defaults.js";
import type { KubeClient } from "./kube.js";
import { isConflict } from "./kube-errors.js";
import { canonical, LEASES, type Lease, type LeaseSpec, microTime } from "./lease.js";
import { LeaseFence } from "./outbound-guards.js";
import { type Clock, type ObjectKey, systemClock, withDeadline } from "./resource.js";
import { StopBudget } from "./stop-budget.js";

export { LEASES } from "./lease.js";
export { LeaseFence } from "./outbound-guards.js";

/** Options of a {@link LeaderElector}; durations as client-go's (defaults 15 s / 10 s / 2 s). */
export interface LeaderElectionOptions {
  leaseName: string;
  leaseNamespace: string;
  /** Unique per process, e.g. the pod name plus a random suffix. */
  identity: string;
  /** How long a lease holds without renewal; others take over after it. Default 15 s. */
  leaseDurationMs?: number;
  /** The leader gives up when it could not renew for this long. Default 10 s. */
  renewDeadlineMs?: number;
  /** Interval between attempts to acquire or renew. Default 2 s. */
  retryPeriodMs?: number;
  clock?: Clock;
  /** Where the elector records how long this process may act; default its own. */
  fence?: LeaseFence;
  log?: Logger;
  /** Called once this process becomes the leader. */
  onStartedLeading: () => void;
  /** Called when leadership is lost (not after a graceful {@link LeaderElector.stop}). */
  onStoppedLeading: () => void;
  /** Reports leadership changes (for the leader_election_master_status gauge). */
  onLeaderChange?: (isLeader: boolean) => void;
}

/**
 * Leader election on a Lease, as client-go's leaderelection does it: a candidate takes
 * the Lease when it is free (no holder, as after a graceful release) or when its record
 * has not changed for the lease duration as observed on the candidate's own clock (no
 * cross-node clock comparison); the leader renews every retry period and steps down
 * when it could not renew within the renew deadline. Writes are conditioned on the
 * Lease's resourceVersion, so two candidates can never both win.
 */
export class LeaderElector {
  private leader = false;
  private stopped = true;
  private loop?: Promise<void>;
  private wake?: () => void;
  /** The last acquire-or-renew round, which may still be under way after its timeout. */
  private round?: Promise<boolean>;
  private observed?: string;
  private observedAt = 0;
  /** Rounds that failed in a row ({@link reportFailure}). */
  private failures = 0;
  private readonly key: ObjectKey;
  private readonly leaseDurationMs: number;
  private readonly renewDeadlineMs: number;
  private readonly retryPeriodMs: number;
  private readonly clock: Clock;
  private readonly fence: LeaseFence;

  constructor(
    private readonly kube: KubeClient,
    private readonly options: LeaderElectionOptions,
  ) {
    this.key = { namespace: options.leaseNamespace, name: options.leaseName };
    this.leaseDurationMs = options.leaseDurationMs ?? DEFAULT_LEASE_TIMINGS.leaseDurationMs;
    this.renewDeadlineMs = options.renewDeadlineMs ?? DEFAULT_LEASE_TIMINGS.renewDeadlineMs;
    this.retryPeriodMs = options.retryPeriodMs ?? DEFAULT_LEASE_TIMINGS.retryPeriodMs;
    this.clock = options.clock ?? systemClock;
    this.fence = options.fence ?? new LeaseFence(this.clock);
    // A call that finds the renew deadline passed before the loop does (a process paused
    // past its lease wakes with calls due) ends the leadership at once: its reconcile is
    // then aborted, not failed.
    this.fence.whenLapsed(() => this.lose());
    if (
      !(this.leaseDurationMs > this.renewDeadlineMs && this.renewDeadlineMs > this.retryPeriodMs)
    ) {
      throw new Error("leader election needs leaseDuration > renewDeadline > retryPeriod");
    }
  }

  /** True while this process holds the Lease. */
  isLeader(): boolean {
    return this.leader;
  }

  /** Whether this process may act ({@link LeaseFence}). */
  mayAct(): boolean {
    return this.fence.mayAct();
  }

  /** Starts campaigning (in the background). */
  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.loop = this.run();
  }

  /**
   * Stops campaigning or renewing, within a renew deadline or `withinMs` if less (the
   * manager's stop budget): an API server that does not answer (a network partition)
   * must not hold the exit past the pod's grace period. With `release` (the default,
   * for a graceful shutdown) a held Lease is given up so that a successor takes over at
   * once; without it, or when the API server does not answer in time, the Lease simply
   * expires, as when the process is killed.
   */
  async stop(options: { release?: boolean; withinMs?: number } = {}): Promise<void> {
    const budget = new StopBudget(Math.min(this.renewDeadlineMs, options.withinMs ?? Infinity));
    this.stopped = true;
    this.wake?.();
    await withDeadline(this.loop ?? Promise.resolve(), budget.left(), () => undefined);
    // A round still under way (past its timeout, or won as the loop stopped) would leave
    // the Lease held or make the release conflict: let it land, then release.
    if (options.release ?? true) {
      const lastRoundHeld = await this.lastRound(budget.left());
      if (this.leader || lastRoundHeld) await this.release(budget);
    }
    this.setLeader(false);
  }

  /** The outcome of the last round once it has landed; false when it has not within `ms`. */
  private async lastRound(ms: number): Promise<boolean> {
    if (!this.round) return false;
    return withDeadline(this.round, ms, () => false);
  }

  /**
   * Campaigns, then renews. A round's time is taken before it is sent: another process
   * sees the record it writes later, and counts the lease duration from then.
   */
  private async run(): Promise<void> {
    let renewedAt = await this.acquire();
    if (renewedAt === undefined || this.stopped) return;
    this.setLeader(true);
    this.options.log?.info({ lease: this.key }, "became the leader");
    this.fence.renewed(renewedAt, this.renewDeadlineMs);
    this.options.onStartedLeading();
    while (!this.stopped && this.leader) {
      await this.sleep(this.retryPeriodMs);
      if (this.stopped || !this.leader) return;
      const began = this.now();
      const left = this.renewDeadlineMs - (began - renewedAt);
      if (left > 0 && (await this.attempt(left))) {
        renewedAt = began;
        this.fence.renewed(began, this.renewDeadlineMs);
      } else if (!this.mayAct()) return; // past the renew deadline: lost (lose())
    }
  }

  /**
   * Campaigns until a round takes the Lease within a renew deadline of its start: that
   * start, or undefined once stopped. A round won later (the process paused meanwhile)
   * does not lead: another may hold the Lease by then (if none does, the next round wins).
   */
  private async acquire(): Promise<number | undefined> {
    while (!this.stopped) {
      const began = this.now();
      const won = await this.attempt(this.retryPeriodMs);
      if (won && this.now() - began < this.renewDeadlineMs) return began;
      if (!this.stopped) await this.sleep(this.retryPeriodMs * (1 + Math.random() * 0.2));
    }
    return undefined;
  }

  /** Ends the leadership, once, when the renew deadline passed (not in a graceful stop). */
  private lose(): void {
    if (!this.leader || this.stopped) return;
    this.fence.released(); // for good, though a renewal under way may still land
    this.setLeader(false);
    this.options.log?.error(
      { lease: this.key },
      "could not renew the lease in time; leadership lost",
    );
    this.options.onStoppedLeading();
    this.wake?.();
  }

  /** One acquire-or-renew round, bounded by `timeoutMs`; true when we hold the Lease. */
  private async attempt(timeoutMs: number): Promise<boolean> {
    const round = this.tryAcquireOrRenew();
    this.round = round.catch(() => false);
    try {
      const held = await withDeadline(round, timeoutMs, () => false);
      if (held) this.failures = 0;
      return held;
    } catch (err) {
      if (!isConflict(err)) this.reportFailure(err);
      return false;
    }
  }

  /**
   * A round that failed: a warning at the 1st, 2nd, 4th, 8th and 16th failure in a row
   * and every 16th after (a backoff's steps, for rounds every retry period), else debug.
   */
  private reportFailure(err: unknown): void {
    this.failures += 1;
    const n = this.failures;
    const step = (n & (n - 1)) === 0 || n % 16 === 0;
    this.options.log?.[step ? "warn" : "debug"](
      { err, failures: n },
      "leader election attempt failed",
    );
  }

  private async tryAcquireOrRenew(): Promise<boolean> {
    const now = this.now();
    const lease = await this.kube.get<Lease>(LEASES, this.key);
    const fresh: LeaseSpec = {
      holderIdentity: this.options.identity,
      leaseDurationSeconds: Math.ceil(this.leaseDurationMs / 1000),
      acquireTime: microTime(new Date(now)),
      renewTime: microTime(new Date(now)),
      leaseTransitions: 0,
    };
    if (!lease) {
      await this.kube.create<Lease>(LEASES, {
        metadata: { name: this.key.name, namespace: this.key.namespace },
        spec: fresh,
      });
      this.observe(fresh, now);
      return true;
    }
    const spec = lease.spec ?? {};
    if (canonical(spec) !== this.observed) this.observe(spec, now);
    const mine = spec.holderIdentity === this.options.identity;
    const duration = (spec.leaseDurationSeconds ?? this.leaseDurationMs / 1000) * 1000;
    if (spec.holderIdentity && !mine && this.observedAt + duration > now) return false;
    const next: LeaseSpec = mine
      ? { ...spec, leaseDurationSeconds: fresh.leaseDurationSeconds, renewTime: fresh.renewTime }
      : { ...fresh, leaseTransitions: (spec.leaseTransitions ?? 0) + 1 };
    await this.kube.replace<Lease>(LEASES, { ...lease, spec: next });
    this.observe(next, now);
    return true;
  }

  /** Gives up the Lease if this process holds it, within what is left of the stop's `budget`. */
  private async release(budget: StopBudget): Promise<void> {
    // Another process may take it at once: nothing acts from here on.
    this.fence.released();
    const late = () => {
      throw new Error(`no answer within the stop's deadline (${budget.totalMs} ms)`);
    };
    try {
      if (await withDeadline(this.writeRelease(), budget.left(), late)) {
        this.options.log?.info({ lease: this.key }, "released the lease");
      }
    } catch (err) {
      this.options.log?.warn({ err }, "could not release the lease; it will expire");
    }
  }

  /** Writes the Lease free when this process holds it; true when it did. */
  private async writeRelease(): Promise<boolean> {
    const lease = await this.kube.get<Lease>(LEASES, this.key);
    if (!lease || lease.spec?.holderIdentity !== this.options.identity) return false;
    const now = microTime(this.clock.now());
    const spec: LeaseSpec = {
      leaseDurationSeconds: 1,
      acquireTime: now,
      renewTime: now,
      leaseTransitions: lease.spec?.leaseTransitions ?? 0,
    };
    await this.kube.replace<Lease>(LEASES, { ...lease, spec });
    return true;
  }

  private observe(spec: LeaseSpec, now: number): void {
    this.observed = canonical(spec);
    this.observedAt = now;
  }

  private setLeader(leader: boolean): void {
    if (this.leader === leader) return;
    this.leader = leader;
    this.options.onLeaderChange?.(leader);
  }

  private now(): number {
    return this.clock.now().getTime();
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.wake = done;
    });
  }
}
