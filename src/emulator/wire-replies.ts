/**
 * What the emulator writes on the wire for an envelope and for an injected fault.
 */
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

/**
 * The answer of a terminal fault, or "drop" (destroy the connection without answering).
 * An error fault answers HTTP 200 unless `mirrorEnvelopeStatus`; a 429 always carries
 * HTTP 429, with Retry-After when the rule sets it.
 */
export function faultReply(rule: FaultRule, mirrorEnvelopeStatus: boolean): "drop" | WireReply {
  switch (rule.kind) {
    case "drop":
      return "drop";
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
    default:
      return {
        httpStatus: mirrorEnvelopeStatus ? rule.status : 200,
        status: rule.status,
        body: envelopeBody(rule.status, rule.message ?? "Internal Server Error", {}),
      };
  }
}
