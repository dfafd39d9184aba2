/**
 * What a request passes on its way out of this process. `run` makes the two guards once
 * and hands them to every client: {@link SecretRedactor}, the last line of defence for
 * secrets (every log line and every body the Kubernetes client sends, so a service
 * message echoing the API key into a condition never leaves), and {@link LeaseFence}
 * (whether this process may act at all). The Kubernetes client's rate per flow is
 * here too ({@link FairTokenBucket}).
 */
import { TokenBucket, type TokenBucketOptions } from "./fair-lanes.js";
import { type Clock, systemClock } from "./resource.js";

export const REDACTED = "[REDACTED]";

/** No real API key is shorter; replacing a short string would mangle ordinary words. */
export const MIN_SECRET_LENGTH = 8;

/** How many secrets besides the current ones are remembered (rotated keys stay redacted). */
const MAX_SECRETS = 32;

/**
 * Replaces registered secrets in text and JSON values: each source's current secret
 * ({@link keep}) for as long as it is current, and the {@link MAX_SECRETS} most recent
 * others (replaced ones, and those of {@link add}).
 */
export class SecretRedactor {
  private readonly current = new Map<string, string>();
  /** Oldest first. */
  private readonly recent: string[] = [];
  /** Each current and recent secret, and its JSON-escaped form. */
  private secrets: string[] = [];

  /** Registers `secret` among the recent ones; short or known ones are ignored. */
  add(secret: string): void {
    if (this.remember(secret)) this.gather();
  }

  /** Registers `secret` as the current one of `source` (e.g. `service.apiKey`). */
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

  /** `value` as JSON with every string redacted; serialized twice only when a secret is in it. */
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
 * its last renewal is a renew deadline old or it released the Lease, since another may
 * hold it before the elector's loop notices (e.g. after a pause); true while it never led.
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

  /** `fn` runs whenever {@link mayAct} answers false (the elector then gives up leading). */
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

/** The Kubernetes client's budget: `qps` and `burst` per flow (an account), under `total`. */
export interface FlowRateLimitOptions extends TokenBucketOptions {
  total?: TokenBucketOptions;
}

/** Flow buckets kept before the full (idle) ones are dropped. */
const KEPT_FLOW_BUCKETS = 64;

/**
 * A token bucket per flow under a shared ceiling, as API Priority and Fairness shares a
 * level: a flow with a backlog waits at its own bucket and takes its turn of the ceiling,
 * so another flow's request waits about as long as it would alone. `qps <= 0`: no limit.
 */
export class FairTokenBucket {
  private readonly flows = new Map<string, TokenBucket>();
  private readonly ceiling: TurnBucket | undefined;

  constructor(
    private readonly options: FlowRateLimitOptions,
    private readonly clock: Clock = systemClock,
  ) {
    this.ceiling = options.total ? new TurnBucket(options.total, clock) : undefined;
  }

  /** Resolves when a request of `flow` may be sent; returns the ms it waited. */
  async take(flow = ""): Promise<number> {
    const started = this.clock.now().getTime();
    const delay = this.bucketOf(flow).reserve();
    if (delay > 0) await new Promise((r) => setTimeout(r, delay));
    if (this.ceiling) await this.ceiling.take(flow);
    return this.clock.now().getTime() - started;
  }

  get waiting(): number {
    return this.ceiling?.waiting ?? 0;
  }

  private bucketOf(flow: string): TokenBucket {
    let bucket = this.flows.get(flow);
    if (!bucket) {
      // Flows come and go with connections: a full bucket is the same as a new one.
      if (this.flows.size >= KEPT_FLOW_BUCKETS) {
        for (const [f, b] of this.flows) if (b.isFull()) this.flows.delete(f);
      }
      bucket = new TokenBucket(this.options, this.clock);
      this.flows.set(flow, bucket);
    }
    return bucket;
  }
}

/** A {@link TokenBucket} whose tokens, while requests wait, go to the waiting flows in turn. */
class TurnBucket {
  private readonly bucket: TokenBucket;
  private readonly queues = new Map<string, Array<() => void>>();
  /** Flows with waiting requests, in turn order. */
  private readonly order: string[] = [];
  private turn = 0;
  private waiters = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly options: TokenBucketOptions,
    clock: Clock,
  ) {
    this.bucket = new TokenBucket(options, clock);
  }

  async take(flow: string): Promise<void> {
    if (this.options.qps <= 0) return;
    if (this.waiters === 0 && this.bucket.refill() >= 1) {
      this.bucket.reserve();
      return;
    }
    await new Promise<void>((resolve) => {
      let queue = this.queues.get(flow);
      if (!queue) {
        queue = [];
        this.queues.set(flow, queue);
        this.order.push(flow);
      }
      queue.push(resolve);
      this.waiters++;
      this.schedule();
    });
  }

  get waiting(): number {
    return this.waiters;
  }

  private schedule(): void {
    if (this.timer || this.waiters === 0) return;
    const due = Math.max(0, Math.ceil(((1 - this.bucket.refill()) / this.options.qps) * 1000));
    this.timer = setTimeout(() => {
      this.timer = undefined;
      while (this.waiters > 0 && this.bucket.refill() >= 1) {
        this.bucket.reserve();
        this.nextWaiter()();
      }
      this.schedule();
    }, due);
  }

  /** The first waiter of the next flow in turn; a flow served out leaves the turns. */
  private nextWaiter(): () => void {
    this.turn %= this.order.length;
    const flow = this.order[this.turn] as string;
    const queue = this.queues.get(flow) as Array<() => void>;
    const resolve = queue.shift() as () => void;
    this.waiters--;
    if (queue.length === 0) {
      this.queues.delete(flow);
      this.order.splice(this.turn, 1);
    } else {
      this.turn++;
    }
    return resolve;
  }
}
