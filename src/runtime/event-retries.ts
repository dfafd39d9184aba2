import { isKubeUnreachable } from "./kube-unreachable.js";

/** How an Event's write the API server did not answer is tried again ({@link EventRetries}). */
export interface EventRetryOptions {
  /** Tries of a write in all, the first included. Default 12 (client-go's). */
  tries?: number;
  /** Between two tries, up to a quarter more at random. Default 10 s (client-go's). */
  delayMs?: number;
  /** Writes waiting for their next try at most; past it the oldest is dropped. Default 1000. */
  maxWaiting?: number;
}

interface Waiting {
  promise: Promise<void>;
  /** Tries the write now, the last time when `last`. */
  now: (last: boolean) => void;
  /** Ends the wait with the error of its last try: the write is dropped. */
  drop: () => void;
}

/**
 * Writes of Events (events.ts) tried again while the API server does not answer them
 * (kube-unreachable.ts), as client-go's broadcaster tries an Event again: `tries` in all,
 * `delayMs` apart, so that an Event recorded during a short outage (a failed create, a
 * Warning) is still there to read after it. A write the API server refused (403, 422, an
 * admission webhook) is not tried again. Memory is bounded: at most `maxWaiting` writes
 * wait, past it the oldest waiting is dropped with the error of its last try.
 */
export class EventRetries {
  private readonly waiting = new Map<string, Waiting>();
  private readonly tries: number;
  private readonly delayMs: number;
  private readonly maxWaiting: number;
  /** While {@link flush} runs: a write not answered is dropped at once. */
  private flushing = 0;

  constructor(options: EventRetryOptions = {}) {
    this.tries = options.tries ?? 12;
    this.delayMs = options.delayMs ?? 10_000;
    this.maxWaiting = options.maxWaiting ?? 1000;
  }

  /**
   * Tries `write`, whose first try failed with `err`, again until it is answered or its
   * tries are spent; rejects with the error of its last try when it is dropped (at once
   * for an error other than no answer). A write of `key` that would wait while another
   * of it waits ends with that one instead, resolved whatever its end (that one's caller
   * tells it): `write` reads what it sends when it is tried (a series count, the newest).
   */
  retry(key: string, err: unknown, write: () => Promise<unknown>): Promise<void> {
    return this.failed(key, err, write, 1, false);
  }

  /** Tries every waiting write now, the last time: a stop does not wait for their delays. */
  async flush(wait: () => Promise<void>): Promise<void> {
    this.flushing++;
    try {
      for (const w of [...this.waiting.values()]) w.now(true);
      await wait();
    } finally {
      this.flushing--;
    }
  }

  private async attempt(
    key: string,
    write: () => Promise<unknown>,
    tried: number,
    last: boolean,
  ): Promise<void> {
    try {
      await write();
    } catch (err) {
      await this.failed(key, err, write, tried, last);
    }
  }

  /** After try `tried` of `write` failed with `err`: the next one, or `err`. */
  private failed(
    key: string,
    err: unknown,
    write: () => Promise<unknown>,
    tried: number,
    last: boolean,
  ): Promise<void> {
    if (!isKubeUnreachable(err) || last || tried >= this.tries || this.flushing > 0) {
      return Promise.reject(err);
    }
    const joined = this.waiting.get(key);
    if (joined) return joined.promise.catch(() => undefined);
    return this.wait(key, err, (lastTry) => this.attempt(key, write, tried + 1, lastTry));
  }

  /** Waits `delayMs` (or until flushed, or dropped as the oldest) before `next`. */
  private wait(key: string, err: unknown, next: (last: boolean) => Promise<void>): Promise<void> {
    let settle: { resolve: () => void; reject: (err: unknown) => void } | undefined;
    const promise = new Promise<void>((resolve, reject) => {
      settle = { resolve, reject };
    });
    /** Whether the wait was still on, which it ends. */
    const end = () => {
      if (this.waiting.get(key) !== entry) return false;
      this.waiting.delete(key);
      clearTimeout(timer);
      return true;
    };
    const entry: Waiting = {
      promise,
      now: (last) => {
        if (end()) next(last).then(settle?.resolve, settle?.reject);
      },
      drop: () => {
        if (end()) settle?.reject(err);
      },
    };
    const timer = setTimeout(() => entry.now(false), this.delayMs * (1 + Math.random() / 4));
    timer.unref();
    this.waiting.set(key, entry);
    if (this.waiting.size > this.maxWaiting) this.waiting.values().next().value?.drop();
    return promise;
  }
}
