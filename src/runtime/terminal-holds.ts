/**
 * Keys held by a terminal error: a key whose reconcile failed terminally is not
 * retried until the object changes in a part a reconcile acts on (see
 * {@link nonStatusFingerprint}), or, for a failure outside the object (an external
 * hold, see `isExternalHold`), after a slow per-key backoff as well.
 */
import { DEFAULT_HOLD_BACKOFF } from "./defaults.js";
import { nonStatusFingerprint } from "./own-write-echoes.js";
import { type BackoffOptions, ExponentialBackoff } from "./ratelimit.js";
import type { KubeObject } from "./resource.js";

/** The terminal holds of one controller's keys. */
export class TerminalHolds {
  /** Held key → the fingerprint of the object when its reconcile failed. */
  private readonly held = new Map<string, string>();
  /** Retries of keys held by an external terminal error, per key. */
  private readonly backoff: ExponentialBackoff;

  constructor(backoff: Partial<BackoffOptions> = {}) {
    this.backoff = new ExponentialBackoff({ ...DEFAULT_HOLD_BACKOFF, ...backoff });
  }

  /** Keys currently held. */
  keys(): string[] {
    return [...this.held.keys()];
  }

  /** True when `key` is held. */
  has(key: string): boolean {
    return this.held.has(key);
  }

  /** True when `key` is held and `obj` has not changed since (status aside). */
  holdsUnchanged(key: string, obj: KubeObject): boolean {
    const held = this.held.get(key);
    return held !== undefined && held === nonStatusFingerprint(obj);
  }

  /** Releases `key` (something changed that asks for a reconcile); its backoff stays. */
  release(key: string): void {
    this.held.delete(key);
  }

  /** After a successful reconcile of `key`: released, and its backoff reset. */
  succeeded(key: string): void {
    this.held.delete(key);
    this.backoff.forget(key);
  }

  /**
   * Holds `key` after a terminal failure, with the object as it was (none: the object
   * is gone, nothing to hold). For an external hold, returns the delay before the slow
   * retry (each call doubles it); otherwise resets the key's backoff and returns
   * undefined.
   */
  hold(key: string, obj: KubeObject | undefined, external: boolean): number | undefined {
    if (obj) this.held.set(key, nonStatusFingerprint(obj));
    if (external) return this.backoff.when(key);
    this.backoff.forget(key);
    return undefined;
  }

  /** Releases every key, and resets the backoff of `keys` (e.g. the API key changed). */
  clear(keys: Iterable<string>): void {
    this.held.clear();
    for (const key of keys) this.backoff.forget(key);
  }
}
