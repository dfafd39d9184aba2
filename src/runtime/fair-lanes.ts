/**
 * Fair shares among flows (e.g. the accounts objects use), as API Priority and Fairness
 * gives them: a work queue's workers ({@link FairLanes}: flows served in turn, lanes in
 * order) and a Kubernetes client's requests in flight ({@link FairSeats}).
 */

/**
 * A key's lane. `normal`: work to do (a new or changed object, a create in progress, a
 * retry). `deferred`: a follow-up look of an object still settling (a TrainingJob's pods
 * after its first look). `low`: a routine look (a poll of a settled object, a resync, the
 * initial list). A lane is handed out only when no lane before it has a key for a flow
 * below its limits, so that a new object is not stuck behind a sweep of polls when the
 * service's rate limit is the bound, nor a follow-up behind polls.
 */
export type QueuePriority = "normal" | "deferred" | "low";

/** The lanes in the order they are served. */
export const LANES_IN_ORDER: readonly QueuePriority[] = ["normal", "deferred", "low"];

/** Whether lane `a` is served before lane `b`. */
export function servedBefore(a: QueuePriority, b: QueuePriority): boolean {
  return LANES_IN_ORDER.indexOf(a) < LANES_IN_ORDER.indexOf(b);
}

/**
 * Most keys of one flow that workers hold from a lane behind work and the lanes after it
 * (`deferred`: follow-ups and routine looks together, `low`: routine looks), so that looks
 * waiting on a saturated budget leave the flow workers for its new work. Absent: no bound.
 */
export interface LaneLimits {
  deferred?: number;
  low?: number;
}

/**
 * The waiting keys of a work queue, by priority and flow: flows served in turn, lanes in
 * {@link LANES_IN_ORDER}, a flow whose keys hold `flowLimit` workers (or a lane's
 * {@link LaneLimits}) skipped until one is done.
 */
export class FairLanes {
  private readonly lanes: Record<QueuePriority, Map<string, string[]>> = {
    normal: new Map(),
    deferred: new Map(),
    low: new Map(),
  };
  /** The flows in the order of their turns; the next turn starts at `turn`. */
  private readonly flows: string[] = [];
  private turn = 0;
  /** Keys held by workers per flow, by the lane each came from. */
  private readonly held = new Map<string, Record<QueuePriority, number>>();
  /** The bound of each lane and the lanes after it, in {@link LANES_IN_ORDER}. */
  private readonly limits: number[];

  constructor(flowLimit: number, limits: LaneLimits = {}) {
    const unbounded = Number.POSITIVE_INFINITY;
    this.limits = [flowLimit, limits.deferred ?? unbounded, limits.low ?? unbounded].map((n) =>
      Math.max(1, n),
    );
  }

  /** Appends `key` to the lane of `flow` in `priority`, created with the flow's first key. */
  push(priority: QueuePriority, flow: string, key: string): void {
    let lane = this.lanes[priority].get(flow);
    if (!lane) {
      lane = [];
      this.lanes[priority].set(flow, lane);
      if (!this.flows.includes(flow)) this.flows.push(flow);
    }
    lane.push(key);
  }

  /**
   * The first entry `live` accepts of the next flow in turn below its limits, lanes in
   * order; entries it refuses on the way are dropped, and so are emptied lanes.
   */
  next(
    live: (key: string, priority: QueuePriority) => boolean,
  ): { key: string; priority: QueuePriority } | undefined {
    const n = this.flows.length;
    for (const priority of LANES_IN_ORDER) {
      const lanes = this.lanes[priority];
      for (let i = 0; i < n; i++) {
        const flow = this.flows[(this.turn + i) % n] as string;
        const lane = lanes.get(flow);
        if (!lane || this.atLimit(flow, priority)) continue;
        let key = lane.shift();
        while (key !== undefined && !live(key, priority)) key = lane.shift();
        if (lane.length === 0) lanes.delete(flow);
        if (key === undefined) continue;
        this.turn = (this.turn + i + 1) % n;
        return { key, priority };
      }
    }
    return undefined;
  }

  /** A worker took a key of `flow` from the lane of `priority`. */
  hold(flow: string, priority: QueuePriority): void {
    const held = this.held.get(flow) ?? { normal: 0, deferred: 0, low: 0 };
    held[priority]++;
    this.held.set(flow, held);
  }

  /** A worker is done with a key of `flow` from `priority`'s lane (then {@link tidy} it). */
  release(flow: string, priority: QueuePriority): void {
    const held = this.held.get(flow);
    if (held) held[priority] = Math.max(0, held[priority] - 1);
  }

  /** Forgets a flow with no lane and no worker (its turn goes with it). */
  tidy(flow: string): void {
    if (LANES_IN_ORDER.some((priority) => this.lanes[priority].has(flow))) return;
    const held = this.held.get(flow);
    if (held && held.normal + held.deferred + held.low > 0) return;
    this.held.delete(flow);
    const index = this.flows.indexOf(flow);
    if (index < 0) return;
    this.flows.splice(index, 1);
    if (this.turn > index) this.turn--;
    if (this.turn >= this.flows.length) this.turn = 0;
  }

  /** Drops every waiting key (shutdown). */
  clear(): void {
    for (const priority of LANES_IN_ORDER) this.lanes[priority].clear();
  }

  /**
   * Whether a key of `flow` from `priority`'s lane would pass a limit: that of its lane
   * or of any lane before it, each counting the keys held from it and the lanes after.
   */
  private atLimit(flow: string, priority: QueuePriority): boolean {
    const held = this.held.get(flow);
    if (!held) return false;
    let from = 0;
    for (let i = LANES_IN_ORDER.length - 1; i >= 0; i--) {
      from += held[LANES_IN_ORDER[i] as QueuePriority];
      if (i <= LANES_IN_ORDER.indexOf(priority) && from >= (this.limits[i] as number)) return true;
    }
    return false;
  }
}

/**
 * Seats (requests in flight) shared by flows: a request takes a free seat when none
 * waits, else waits in its flow's queue, and each seat set free goes to the waiting flow
 * holding the fewest (the earliest of those). A flow alone uses every seat; beside a
 * backlog, another flow's request takes the next seat instead of queueing behind it.
 */
export class FairSeats {
  private free: number;
  /** Waiting requests per flow, the flows in the order they began to wait. */
  private readonly queues = new Map<string, Array<() => void>>();
  private readonly held = new Map<string, number>();

  constructor(seats: number) {
    this.free = Math.max(1, seats);
  }

  /**
   * Undefined when a request of `flow` holds a seat at once, else a promise settled when
   * it does; {@link release} the seat once the request is answered.
   */
  acquire(flow: string): Promise<void> | undefined {
    if (this.free > 0 && this.queues.size === 0) {
      this.free--;
      this.take(flow);
      return undefined;
    }
    return new Promise<void>((resolve) => {
      const queue = this.queues.get(flow);
      if (queue) queue.push(resolve);
      else this.queues.set(flow, [resolve]);
    });
  }

  /** Sets a seat of `flow` free: it goes to the waiting flow holding the fewest, if any. */
  release(flow: string): void {
    const held = (this.held.get(flow) ?? 1) - 1;
    if (held > 0) this.held.set(flow, held);
    else this.held.delete(flow);
    let next: string | undefined;
    for (const waiting of this.queues.keys()) {
      if (next === undefined || (this.held.get(waiting) ?? 0) < (this.held.get(next) ?? 0)) {
        next = waiting;
      }
    }
    if (next === undefined) {
      this.free++;
      return;
    }
    const queue = this.queues.get(next) as Array<() => void>;
    const resolve = queue.shift() as () => void;
    // Served, a flow waits behind the others again.
    this.queues.delete(next);
    if (queue.length > 0) this.queues.set(next, queue);
    this.take(next);
    resolve();
  }

  /** Requests waiting for a seat. */
  get waiting(): number {
    let n = 0;
    for (const queue of this.queues.values()) n += queue.length;
    return n;
  }

  private take(flow: string): void {
    this.held.set(flow, (this.held.get(flow) ?? 0) + 1);
  }
}
