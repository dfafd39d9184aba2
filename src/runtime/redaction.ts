/**
 * The last line of defence for secrets: whatever the service (or anyone) puts into a
 * message, the secrets registered here never leave the process. One redactor is
 * shared by every exit: the log stream (each serialized line), and every body the
 * Kubernetes client sends (status writes, Events, annotations). Error objects are
 * scrubbed where they are made too; this catches what quotes a secret anyway, such as
 * a service message echoing the API key into a condition.
 */

/** What replaces a secret. */
export const REDACTED = "[REDACTED]";

/**
 * Secrets shorter than this are not registered: no real API key is that short, and
 * replacing a short string would mangle ordinary words.
 */
export const MIN_SECRET_LENGTH = 8;

/** Remembers at most this many secrets (rotated keys stay redacted), oldest dropped first. */
const MAX_SECRETS = 32;

/** Replaces registered secrets in text and JSON values. */
export class SecretRedactor {
  /** Each secret with its JSON-escaped form, when that differs (for serialized lines). */
  private readonly secrets: string[] = [];

  /** Registers `secret` (every key of every connection); short or known ones are ignored. */
  add(secret: string): void {
    if (secret.length < MIN_SECRET_LENGTH || this.secrets.includes(secret)) return;
    const escaped = JSON.stringify(secret).slice(1, -1);
    this.secrets.push(secret);
    if (escaped !== secret) this.secrets.push(escaped);
    while (this.secrets.length > MAX_SECRETS) this.secrets.shift();
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
