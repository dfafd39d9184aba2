/**
 * The emulator's request log: every service API request with its outcome, kept in a
 * bounded ring so a long benchmark cannot exhaust memory. The Authorization header is
 * never recorded, only whether it was accepted.
 */

/** One logged request. */
export interface RequestLogEntry {
  /** Increasing sequence number; read the log from a known point with `since`. */
  seq: number;
  /** RFC 3339 time the request arrived. */
  time: string;
  method: string;
  path: string;
  /** Query parameters. */
  query: Record<string, string>;
  /** Endpoint name, when the path is an operation. */
  endpoint?: string;
  /** Parsed JSON body (or the raw text when it is not JSON). */
  body?: unknown;
  /** Whether the bearer key was accepted. */
  authorized: boolean;
  /** The account (tenant) whose key it was, when accepted. */
  tenant?: string;
  /** Envelope status answered (undefined for a dropped connection). */
  status?: number;
  httpStatus?: number;
  /** The injected fault, if any. */
  fault?: string;
  /** True when the request took effect before the fault answered (an acting fault). */
  acted?: boolean;
  durationMs?: number;
}

/** Filters of `RequestLog.read`. */
export interface RequestLogQuery {
  /** Only entries with seq greater than this. */
  since?: number;
  endpoint?: string;
  method?: string;
  /** Only paths starting with this. */
  pathPrefix?: string;
}

/** A bounded in-memory request log. */
export class RequestLog {
  private entries: RequestLogEntry[] = [];
  private seq = 0;

  constructor(private readonly capacity = 20_000) {}

  /** Appends an entry (without seq) and returns it with its seq. */
  add(entry: Omit<RequestLogEntry, "seq">): RequestLogEntry {
    this.seq += 1;
    const full = { ...entry, seq: this.seq };
    this.entries.push(full);
    // Trim in chunks so the cost of shifting is paid rarely.
    if (this.entries.length > this.capacity * 1.25) {
      this.entries = this.entries.slice(this.entries.length - this.capacity);
    }
    return full;
  }

  /** Entries matching `q`, oldest first. */
  read(q: RequestLogQuery = {}): RequestLogEntry[] {
    return this.entries.filter(
      (e) =>
        (q.since === undefined || e.seq > q.since) &&
        (q.endpoint === undefined || e.endpoint === q.endpoint) &&
        (q.method === undefined || e.method === q.method.toUpperCase()) &&
        (q.pathPrefix === undefined || e.path.startsWith(q.pathPrefix)),
    );
  }

  /** Sequence number of the latest entry (0 when none). */
  lastSeq(): number {
    return this.seq;
  }

  /** Empties the log; sequence numbers keep increasing. */
  clear(): void {
    this.entries = [];
  }
}
