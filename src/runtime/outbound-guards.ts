/**
 * The two guards on what leaves this process, each made once by `run` and handed to
 * every client (the Kubernetes clients, the service's, the object storage's):
 *
 * - {@link SecretRedactor}, the last line of defence for secrets: whatever the service
 *   (or anyone) puts into a message, the secrets registered here never leave the
 *   process. It is shared by every exit: the log stream (each serialized line), and
 *   every body the Kubernetes client sends (status writes, Events, annotations). Error
 *   objects are scrubbed where they are made too; this catches what quotes a secret
 *   anyway, such as a service message echoing the API key into a condition.
 * - {@link LeaseFence}: whether this process may act at all (call the service, write
 *   from a reconcile), which leader election (leader-election.ts) keeps.
 */
import { type Clock, systemClock } from "./resource.js";

/** What replaces a secret. */
export const REDACTED = "[REDACTED]";

/**
 * Secrets shorter than this are not registered: no real API key is that short, and
 * replacing a short string would mangle ordinary words.
 */
export const MIN_SECRET_LENGTH = 8;

/** How many secrets besides the current ones are remembered (rotated keys stay redacted). */
const MAX_SECRETS = 32;

/**
 * Replaces registered secrets in text and JSON values. A source's current secret (the
 * API key, a value of a connection's Secret: {@link keep}) is redacted for as long as
 * it is current, however many others come after it; one it replaced, and one
 * registered with {@link add}, is among the {@link MAX_SECRETS} recent ones (oldest
 * dropped first).
 */
export class SecretRedactor {
  /** Each source's current secret. */
  private readonly current = new Map<string, string>();
  /** Secrets no longer (or never) current, oldest first. */
  private readonly recent: string[] = [];
  /** Every form replaced: each current and recent secret, and its JSON-escaped form. */
  private secrets: string[] = [];

  /** Registers `secret` among the recent ones; short or known ones are ignored. */
  add(secret: string): void {
    if (this.remember(secret)) this.gather();
  }

  /**
   * Registers `secret` as the current one of `source` (e.g. `service.apiKey`), redacted
   * until `source` has another; the one it replaces joins the recent ones. Telling the
   * same secret again costs a map lookup; a short one is ignored.
   */
  keep(source: string, secret: string): void {
    const before = this.current.get(source);
    if (before === secret || secret.length < MIN_SECRET_LENGTH) return;
    this.current.set(source, secret);
    if (before !== undefined) this.remember(before);
    this.gather();
  }

  private remember(secret: string): boolean {
    if (secret.length < MIN_SECRET_LENGTH || this.recent.includes(secret)) return false;
    this.recent.push(secret);
    while (this.recent.length > MAX_SECRETS) this.recent.shift();
    return true;
  }

  private gather(): void {
    const forms = new Set<string>();
    for (const s of [...this.current.values(), ...this.recent]) {
      forms.add(s);
      forms.add(JSON.stringify(s).slice(1, -1));
    }
    this.secrets = [...forms];
  }

  /** `text` with every registered secret replaced by {@link REDACTED}. */
  redact(text: string): string {
    let out = text;
    for (const s of this.secrets) if (out.includes(s)) out = out.split(s).join(REDACTED);
    return out;
  }

  /**
   * `value` serialized as JSON with every string redacted: one serialization when no
   * secret is in it (the common case), a second of the redacted copy otherwise. What the
   * Kubernetes client sends, so a body is never stringified twice on the write path.
   */
  serialize(value: unknown): string {
    const text = JSON.stringify(value);
    if (this.secrets.length === 0 || !this.secrets.some((s) => text.includes(s))) return text;
    return JSON.stringify(this.walk(value));
  }

  private walk(value: unknown): unknown {
    if (typeof value === "string") return this.redact(value);
    if (Array.isArray(value)) return value.map((v) => this.walk(v));
    if (value !== null && typeof value === "object") {
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(value)) out[this.redact(k)] = this.walk(v);
      return out;
    }
    return value;
  }
}

/**
 * Whether this process may act (call the service, write from a reconcile): false once
 * its last renewal is a renew deadline old or it released the Lease (another may hold it
 * before the elector's loop notices, e.g. after a pause); true while it never led.
 * {@link mayAct} is bound.
 */
export class LeaseFence {
  private actUntil = Number.POSITIVE_INFINITY;
  private lapsed?: () => void;

  constructor(private readonly clock: Clock = systemClock) {}

  readonly mayAct = (): boolean => {
    if (this.clock.now().getTime() < this.actUntil) return true;
    this.lapsed?.();
    return false;
  };

  /** `fn` runs whenever {@link mayAct} answers false (the elector then loses the leadership). */
  whenLapsed(fn: () => void): void {
    this.lapsed = fn;
  }

  /** The Lease was taken or renewed by a round that began at `at` (ms); not after a release. */
  renewed(at: number, renewDeadlineMs: number): void {
    if (this.actUntil !== Number.NEGATIVE_INFINITY) this.actUntil = at + renewDeadlineMs;
  }

  /** The Lease was given up (or is being): nothing acts from here on. */
  released(): void {
    this.actUntil = Number.NEGATIVE_INFINITY;
  }
}
