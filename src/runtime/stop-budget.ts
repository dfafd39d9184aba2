/**
 * The graceful stop's one budget (`shutdownTimeoutMs`, kept below the pod's grace
 * period): in-flight reconciles drain in what the later stages leave them, then Events
 * are flushed, the Lease released and the informers stopped, each within its share, so
 * that the stop ends inside the budget even when reconciles hang and the API server does
 * not answer (a network partition). A share is a reserve, not a cap: time the drain does
 * not use goes to the later stages.
 */
export class StopBudget {
  private readonly until: number;
  /** What the stages after the drain keep of the budget (see {@link stopShares}). */
  readonly shares: StopShares;

  constructor(
    readonly totalMs: number,
    private readonly now: () => number = Date.now,
  ) {
    this.until = now() + totalMs;
    this.shares = stopShares(totalMs);
  }

  /** Milliseconds left before the deadline, less `reserveMs` kept for later stages; ≥ 0. */
  left(reserveMs = 0): number {
    return Math.max(0, this.until - this.now() - reserveMs);
  }
}

/** The shares of the stages after the drain. */
export interface StopShares {
  /** Flushing the Events the reconciles recorded. */
  events: number;
  /** Releasing the Lease (the last acquire-or-renew round landing first). */
  lease: number;
  /** Stopping the informers and the health server. */
  informers: number;
}

/** The shares of a budget of `totalMs`: a tenth, a fifth and a twentieth, capped at 2, 5 and 1 s. */
export function stopShares(totalMs: number): StopShares {
  return {
    events: Math.min(2_000, totalMs / 10),
    lease: Math.min(5_000, totalMs / 5),
    informers: Math.min(1_000, totalMs / 20),
  };
}
