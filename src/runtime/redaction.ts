/**
 * The last line of defence for secrets: whatever the service (or anyone) puts into a
 * message, the secrets registered here never leave the process. One redactor is
 * shared by every exit: the log stream (each serialized line, logging.ts), and every
 * body the Kubernetes client sends (status writes, Events, annotations: `jsonBody` of
 * kube-transport.ts). Error objects are scrubbed where they are made too; this catches
 * what quotes a secret anyway, such as a service message echoing the API key.
 */

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
  /**
   * Every form replaced: each current and recent secret, and its JSON-escaped form
   * (read-only: a text that holds none needs no redacting).
   */
  forms: readonly string[] = [];

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
    this.forms = [...forms];
  }

  /** `text` with every registered secret replaced by {@link REDACTED}. */
  redact(text: string): string {
    let out = text;
    for (const s of this.forms) if (out.includes(s)) out = out.split(s).join(REDACTED);
    return out;
  }

  /** A copy of JSON value `value` with every string (keys too) redacted. */
  redactValue(value: unknown): unknown {
    if (typeof value === "string") return this.redact(value);
    if (Array.isArray(value)) return value.map((v) => this.redactValue(v));
    if (value !== null && typeof value === "object") {
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(value)) out[this.redact(k)] = this.redactValue(v);
      return out;
    }
    return value;
  }
}
