/**
 * What the emulator writes on the wire for an envelope and for an injected fault.
 */
import type { ServerResponse } from "node:http";
import type { FaultRule } from "./faults.js";

/** An answer to write: HTTP status, envelope status (for the log), body, extra headers. */
export interface WireReply {
  httpStatus: number;
  /** Envelope status; undefined when the body is not an envelope. */
  status: number | undefined;
  body: string;
  headers?: Record<string, string>;
}

/** The JSON of an envelope. */
export function envelopeBody(status: number, message: string, data: unknown): string {
  return JSON.stringify({ status, message, data });
}

/** A truncated envelope: valid start, invalid JSON. */
const TRUNCATED_BODY = '{"status":200,"message":"OK","data":{"id":';

/** Start of a 200 envelope whose data carries one long string, closed by `PADDED_TAIL`. */
const PADDED_HEAD = '{"status":200,"message":"OK","data":{"padding":"';
const PADDED_TAIL = '"}}';

/**
 * The answer of a terminal fault, "drop" (destroy the connection without answering) or
 * "endless" (stream with {@link writeEndlessBody}). An error fault answers its
 * `httpStatus`, else HTTP 200 unless `mirrorEnvelopeStatus`; a 429 always carries HTTP 429, with Retry-After when
 * the rule sets it. `sentKey` is the key the request carried (for `echoKey`).
 */
export function faultReply(
  rule: FaultRule,
  mirrorEnvelopeStatus: boolean,
  sentKey: string,
): "drop" | "endless" | WireReply {
  switch (rule.kind) {
    case "drop":
      return "drop";
    case "endless":
      return "endless";
    case "redirect": {
      const status = rule.status >= 300 && rule.status < 400 ? rule.status : 302;
      return {
        httpStatus: status,
        status: undefined,
        body: "",
        headers: { Location: rule.location },
      };
    }
    case "oversized": {
      const fill = Math.max(0, rule.bodyBytes - PADDED_HEAD.length - PADDED_TAIL.length);
      return { httpStatus: 200, status: 200, body: PADDED_HEAD + "x".repeat(fill) + PADDED_TAIL };
    }
    case "malformed":
      return { httpStatus: 200, status: undefined, body: TRUNCATED_BODY };
    case "rateLimit":
      return {
        httpStatus: 429,
        status: 429,
        body: envelopeBody(429, "Too Many Requests", {}),
        ...(rule.retryAfterSeconds === undefined
          ? {}
          : { headers: { "Retry-After": String(rule.retryAfterSeconds) } }),
      };
    default: {
      const message = rule.message ?? "Internal Server Error";
      return {
        httpStatus: rule.httpStatus ?? (mirrorEnvelopeStatus ? rule.status : 200),
        status: rule.status,
        body: envelopeBody(
          rule.status,
          rule.echoKey ? `${message} (the request carried key ${sentKey})` : message,
          {},
        ),
      };
    }
  }
}

/** Bytes per chunk of an endless body. */
const ENDLESS_CHUNK = "x".repeat(64 * 1024);

/**
 * Writes a 200 envelope whose body never ends: chunks as fast as the client reads them
 * (respecting back-pressure), until the client hangs up. Resolves with the bytes written.
 */
export function writeEndlessBody(res: ServerResponse): Promise<number> {
  res.writeHead(200, { "Content-Type": "application/json; charset=utf-8" });
  res.write(PADDED_HEAD);
  let written = PADDED_HEAD.length;
  return new Promise((resolve) => {
    const pump = () => {
      while (!res.destroyed && !res.writableEnded) {
        written += ENDLESS_CHUNK.length;
        if (!res.write(ENDLESS_CHUNK)) {
          res.once("drain", pump);
          return;
        }
      }
    };
    res.once("close", () => resolve(written));
    pump();
  });
}
