/**
 * Deletes the emulated service takes a while over (`nasReleaseDelayMs`,
 * `taskReleaseDelayMs`): the record stays in its map, shown as being released, until its
 * time has come; `EmulatorState.advance` removes it then.
 */
export class Releases {
  /** Ids being released: the map holding each and when it is gone. */
  private readonly due = new Map<string, { records: Map<string, unknown>; goneAt: number }>();

  /** Whether `id` is being released (a delete of it is a repeated one). */
  has(id: string): boolean {
    return this.due.has(id);
  }

  /**
   * Deletes `id` from `records`: at once when `delayMs` is 0 or less (false), else at
   * `now + delayMs` (true: the caller marks the record as being released).
   */
  start(records: Map<string, unknown>, id: string, now: number, delayMs: number): boolean {
    if (delayMs <= 0) {
      records.delete(id);
      return false;
    }
    this.due.set(id, { records, goneAt: now + delayMs });
    return true;
  }

  /** Removes every record whose time has come. */
  advance(now: number): void {
    for (const [id, { records, goneAt }] of this.due) {
      if (now < goneAt) continue;
      this.due.delete(id);
      records.delete(id);
    }
  }

  clear(): void {
    this.due.clear();
  }
}
