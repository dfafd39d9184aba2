import { Writable } from "node:stream";
import { createLogger } from "../../src/runtime/logging.js";
import type { SecretRedactor } from "../../src/runtime/outbound-guards.js";

/** A stream that keeps each line written to it in `lines` (a logger's destination). */
export function linesInto(lines: string[]): Writable {
  return new Writable({
    write(chunk, _enc, done) {
      lines.push(String(chunk));
      done();
    },
  });
}

/** A debug logger through `redactor` whose serialized lines are kept in `lines` (secret checks). */
export function capturedLog(redactor: SecretRedactor): {
  log: ReturnType<typeof createLogger>;
  lines: string[];
} {
  const lines: string[] = [];
  const log = createLogger({ level: "debug", redactor, destination: linesInto(lines) });
  return { log, lines };
}
