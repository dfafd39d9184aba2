import { type DestinationStream, type Logger, pino } from "pino";

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
}

/**
 * The operator's root logger: JSON lines (one object per line, `time` in ISO 8601)
 * with secrets redacted. Reconcile logs are children carrying `controller`, `key` and
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
    },
    options.destination,
  );
}
