/**
 * The lanes of a {@link WorkQueue}: per priority and flow, the flows served in turn,
 * normal lanes before low ones, and a flow whose keys hold `flowLimit` workers skipped
 * until one is done (API Priority and Fairness's fair queuing). A flow's low keys hold
 * at most `lowLimit` workers, so that routine looks waiting on a saturated budget
 * leave workers for its new work.
 */

/**
 * A key's lane. `normal`: work to do (a new or changed object, a create in progress, a
 * retry). `low`: a routine look (a periodic poll of a settled object, a resync, the
 * initial list); it is handed out only when no normal key waits, so that a new object
 * is not stuck behind a full sweep of polls when the service's rate limit is the bound.
 */
export type QueuePriority = "normal" | "low";

/** The waiting keys of a work queue, by priority and flow; see the module comment. */
export class FairLanes {
  private readonly lanes: Record<QueuePriority, Map<string, string[]>> = {
    normal: new Map(),
    low: new Map(),
  };
  /** The flows in the order of their turns; the next turn starts at `turn`. */
  private readonly flows: string[] = [];
  private turn = 0;
  /** Keys held by workers per flow, and those of them from the low lane. */
  private readonly busy = new Map<string, number>();
  private readonly busyLow = new Map<string, number>();

  constructor(
    private readonly flowLimit: number,
    private readonly lowLimit: number = Number.POSITIVE_INFINITY,
  ) {}

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
   * The first entry `live` accepts of the next flow in turn below its limit, normal
   * lanes first; entries it refuses on the way are dropped, and so are emptied lanes.
   */
  next(
    live: (key: string, priority: QueuePriority) => boolean,
  ): { key: string; priority: QueuePriority } | undefined {
    const n = this.flows.length;
    for (const priority of ["normal", "low"] as const) {
      const lanes = this.lanes[priority];
      for (let i = 0; i < n; i++) {
        const flow = this.flows[(this.turn + i) % n] as string;
        const lane = lanes.get(flow);
        if (!lane || (this.busy.get(flow) ?? 0) >= this.flowLimit) continue;
        if (priority === "low" && (this.busyLow.get(flow) ?? 0) >= this.lowLimit) continue;
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
    this.busy.set(flow, (this.busy.get(flow) ?? 0) + 1);
    if (priority === "low") this.busyLow.set(flow, (this.busyLow.get(flow) ?? 0) + 1);
  }

  /** A worker is done with a key of `flow` from `priority`'s lane (then {@link tidy} it). */
  release(flow: string, priority: QueuePriority): void {
    this.busy.set(flow, (this.busy.get(flow) ?? 1) - 1);
    if (priority === "low") this.busyLow.set(flow, (this.busyLow.get(flow) ?? 1) - 1);
  }

  /** Forgets a flow with no lane and no worker (its turn goes with it). */
  tidy(flow: string): void {
    if (this.lanes.normal.has(flow) || this.lanes.low.has(flow)) return;
    if ((this.busy.get(flow) ?? 0) > 0) return;
    this.busy.delete(flow);
    this.busyLow.delete(flow);
    const index = this.flows.indexOf(flow);
    if (index < 0) return;
    this.flows.splice(index, 1);
    if (this.turn > index) this.turn--;
    if (this.turn >= this.flows.length) this.turn = 0;
  }

  /** Drops every waiting key (shutdown). */
  clear(): void {
    this.lanes.normal.clear();
    this.lanes.low.clear();
  }
}
