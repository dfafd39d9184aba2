import type { RequestLogEntry } from "../../src/emulator/request-log.js";

/** A NAS create call as the emulator's request log keeps it: arrived at `at` (ms), with `body`. */
export function nasCreateCall(at: number, body: Record<string, unknown>): RequestLogEntry {
  return {
    seq: at,
    time: new Date(at).toISOString(),
    method: "POST",
    path: "/v1/subscription/nasStorage/create",
    query: {},
    endpoint: "subscribeNas",
    body,
    authorized: true,
  };
}
