import { EventEmitter } from "node:events";
import { type DestinationStream, type Logger, pino } from "pino";
import type { SecretRedactor } from "./outbound-guards.js";
import { withDeadline } from "./resource.js";

/**
 * Paths pino censors in every log line: API keys and authorization headers, at the top
 * level and nested up to three levels (pino's `*` matches one level).
 */
export const REDACT_PATHS: readonly string[] = [
  "apiKey",
  "*.apiKey",
  "*.*.apiKey",
  "*.*.*.apiKey",
  "authorization",
  "Authorization",
  "*.authorization",
  "*.Authorization",
  "*.*.authorization",
  "*.*.Authorization",
  "*.headers.authorization",
  "*.headers.Authorization",
  "*.*.headers.authorization",
  "*.*.headers.Authorization",
  "token",
  "*.token",
  "*.*.token",
];

/** Options of {@link createLogger}. */
export interface LoggerOptions {
  /** pino level; default `info`. */
  level?: string;
  /** Where lines go; default stdout. Tests pass a stream to read them. */
  destination?: DestinationStream;
  /**
   * Replaces registered secrets in every line, whatever field or message quotes them
   * (a service message echoing the key, an error's properties).
   */
  redactor?: SecretRedactor;
}

/**
 * The message of `err` and of its causes, each cause's message appended only when the
 * message so far does not already say it: the operator's errors wrap their cause as
 * `what: cause` (pino's own serializer would print the cause a second time).
 */
function messageWithNewCauses(err: Error): string {
  let message = err.message;
  const seen = new Set<unknown>([err]);
  let cause = err.cause;
  while (cause instanceof Error && !seen.has(cause)) {
    seen.add(cause);
    if (!message.includes(cause.message)) message += `: ${cause.message}`;
    cause = cause.cause;
  }
  return message;
}

/** pino's error serializer with {@link messageWithNewCauses} as the message. */
function serializeError(err: unknown): unknown {
  const out = pino.stdSerializers.err(err as Error);
  if (err instanceof Error) (out as { message: string }).message = messageWithNewCauses(err);
  return out;
}

/**
 * The operator's root logger: JSON lines (one object per line, `time` in ISO 8601)
 * with secrets redacted: by field path, and (with a redactor) wherever a registered
 * secret appears in the serialized line. Reconcile logs are children carrying `controller`, `key` and
 * `reconcileId`.
 */
export function createLogger(options: LoggerOptions = {}): Logger {
  return pino(
    {
      level: options.level ?? "info",
      base: { name: "aidc-operator" },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: { paths: [...REDACT_PATHS], censor: "[REDACTED]" },
      formatters: { level: (label) => ({ level: label }) },
      serializers: { err: serializeError },
      ...(options.redactor
        ? { hooks: { streamWrite: (line: string) => options.redactor?.redact(line) ?? line } }
        : {}),
    },
    options.destination,
  );
}

/**
 * Node's warnings about a library's own code, nothing the operator's user can change:
 * e.g. undici sets an https:// proxy's IP address as the TLS server name (DEP0123).
 */
const LIBRARY_WARNINGS = new Set(["DeprecationWarning", "ExperimentalWarning"]);

/**
 * Logs the process's warnings (`process.emitWarning`) to `log` instead of Node's
 * `(node:PID) ...` text on stderr, which a log system reading JSON lines cannot parse:
 * a DeprecationWarning or an ExperimentalWarning at info (see {@link LIBRARY_WARNINGS}),
 * any other at warn. Returns a function that gives them back to Node.
 */
export function logProcessWarnings(log: Logger): () => void {
  const node = process.listeners("warning");
  for (const l of node) process.off("warning", l);
  const onWarning = (w: Error & { code?: unknown }) => {
    const warning = { name: w.name, ...(typeof w.code === "string" ? { code: w.code } : {}) };
    log[LIBRARY_WARNINGS.has(w.name) ? "info" : "warn"]({ warning }, w.message);
  };
  process.on("warning", onWarning);
  return () => {
    process.off("warning", onWarning);
    for (const l of node) process.on("warning", l);
  };
}

/** What {@link logWritten} uses of pino's destination to stdout (a SonicBoom). */
type SonicBoomStream = EventEmitter & {
  destroyed: boolean;
  write(line: string): boolean;
  destroy(): void;
};

/** How long the process waits at exit for its last log lines to be written. */
export const LOG_WRITTEN_MS = 2_000;

/**
 * Before the process exits: resolves true once `log` has written every line it was
 * given, or false after `withinMs`, the lines left unwritten dropped (a reader of stdout
 * that no longer reads would never take them). pino's stdout writes asynchronously, and
 * `process.exit` drops a write still under way: its exit hook writes only the lines
 * queued behind it, and retries those for as long as stdout takes nothing, holding the
 * exit. `log.flush(cb)` does not wait for that write (its stream buffers nothing, so it
 * calls back at once); the stream's `drain`, emitted once it holds nothing more, does,
 * and an empty write asks for one. Once dropped, the log takes no more lines.
 */
export async function logWritten(log: Logger, withinMs: number = LOG_WRITTEN_MS): Promise<boolean> {
  const stream = (log as unknown as Record<symbol, unknown>)[pino.symbols.streamSym];
  // pino's own destination (sonic-boom); a stream a test passes writes as it is told.
  if (!(stream instanceof EventEmitter) || !("flushSync" in stream)) return true;
  const boom = stream as unknown as SonicBoomStream;
  if (boom.destroyed) return false;
  let done = () => {};
  const drained = new Promise<void>((resolve) => {
    done = resolve;
    boom.once("drain", done).once("error", done);
    boom.write("");
  });
  try {
    const written = await withDeadline(
      drained.then(() => true),
      withinMs,
      () => false,
    );
    if (!written) boom.destroy();
    return written;
  } finally {
    boom.off("drain", done).off("error", done);
  }
}

/**
 * Logs an error nothing caught (an uncaught exception, an unhandled rejection) as one
 * fatal line of `log`, then exits 1 as Node would, instead of Node's stack trace as
 * text on stderr: the process's last words reach a log system reading JSON lines. The
 * lines before it are written first ({@link logWritten}): pino writes a fatal line at
 * once, ahead of a write still under way, which the exit would drop (and when stdout
 * takes nothing, it is dropped with them).
 */
export function exitOnUncaughtErrors(log: Logger): void {
  process.on("uncaughtException", (err, origin) => {
    void logWritten(log).then((written) => {
      if (written) log.fatal({ err, origin }, "an error nothing caught; exiting");
      process.exit(1);
    });
  });
}
