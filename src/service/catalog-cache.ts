/**
 * The product catalogs' cache of one client: an answer younger than the TTL is reused,
 * one in flight is shared, and a failed one is forgotten at once, so that a burst of
 * creates of one product asks the catalog once.
 */
export class CatalogCache {
  private readonly answers = new Map<string, { at: number; answer: Promise<unknown> }>();

  /** `ttlMs` 0 or less reads every time; `now` is the clock (ms since the epoch). */
  constructor(
    private readonly ttlMs: number,
    private readonly now: () => number,
  ) {}

  /** The answer of `key`, from the cache or from `read()`. */
  read<T>(key: string, read: () => Promise<T>): Promise<T> {
    if (this.ttlMs <= 0) return read();
    const now = this.now();
    const hit = this.answers.get(key);
    if (hit && now - hit.at < this.ttlMs) return hit.answer as Promise<T>;
    const answer = read();
    this.answers.set(key, { at: now, answer });
    answer.catch(() => {
      if (this.answers.get(key)?.answer === answer) this.answers.delete(key);
    });
    return answer;
  }

  /** Drops every answer, so that the next read of each key asks the service. */
  forget(): void {
    this.answers.clear();
  }
}
