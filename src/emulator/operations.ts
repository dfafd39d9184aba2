/**
 * The service API's answers of the emulator: the request body read within its bound,
 * and one operation of the endpoint table served by the handler of its kind
 * (./kinds/<kind>.ts) in the service's envelope, refusals and unknown paths included.
 * server.ts routes to it, after authentication and the faults.
 */
import type { IncomingMessage } from "node:http";
import type { Logger } from "pino";
import type { EndpointName } from "../service/endpoints.js";
import { EmulatorRefusal, type Handler, UnknownIdRefusal } from "./handler-context.js";
import { idsAsNumbers, idsAsText } from "./id-formats.js";
import { KIND_HANDLERS } from "./kinds/index.js";
import type { RouteMatch } from "./router.js";
import type { EmulatorState } from "./state.js";
import { timesAs } from "./time-formats.js";
import { envelopeBody, type WireReply } from "./wire-replies.js";

/**
 * Every operation of the endpoint table, from the module of its kind in ./kinds; the
 * type makes a missing one a compile error.
 */
const HANDLERS: Record<EndpointName, Handler> = KIND_HANDLERS;

/** Largest request body accepted. */
export const MAX_BODY_BYTES = 1024 * 1024;

/** Reads a request's body; undefined when it is larger than {@link MAX_BODY_BYTES}. */
export function readBody(req: IncomingMessage): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY_BYTES) chunks.push(chunk);
    });
    req.on("end", () =>
      resolve(size > MAX_BODY_BYTES ? undefined : Buffer.concat(chunks).toString("utf8")),
    );
    req.on("error", reject);
  });
}

/** One request of the service API, as server.ts has read and routed it. */
export interface OperationRequest {
  /** The world of the caller's account. */
  world: EmulatorState;
  /** The operation its method and path name, if any. */
  route: RouteMatch | undefined;
  method: string;
  path: string;
  query: URLSearchParams;
  /** Whether its bearer key is one of an account. */
  authorized: boolean;
  /** Its body; undefined when too large. */
  text: string | undefined;
  /** Its body parsed, when it is JSON. */
  body: { json: boolean; value: unknown };
  /** Whether an error envelope's HTTP status mirrors its own status. */
  mirror: boolean;
  logger?: Logger | undefined;
}

/** The service's envelope of `status`: HTTP 200 unless the status is mirrored. */
function envelope(
  r: OperationRequest,
  status: number,
  message: string,
  data: unknown = {},
): WireReply {
  return {
    httpStatus: status === 200 || r.mirror ? status : 200,
    status,
    body: envelopeBody(status, message, data),
  };
}

/** `data`, or the configured answer for it when it is a list page without records. */
function emptyListAnswer(world: EmulatorState, data: unknown): unknown {
  const shape = world.behaviour.emptyListData;
  if (shape === "page" || data === null || typeof data !== "object") return data;
  const page = data as { records?: unknown; totalRows?: unknown };
  if (!Array.isArray(page.records) || page.records.length > 0 || page.totalRows !== 0) return data;
  return shape === "null" ? null : {};
}

/**
 * The service's own answer to `r` (the request takes effect here): 403 without a known
 * key, a bare 404 for an unknown path or a missing operation, 413 and 400 for a body
 * too large or not JSON, else the handler's data or refusal.
 */
export function serveOperation(r: OperationRequest): WireReply {
  if (!r.authorized) return envelope(r, 403, "Forbidden");
  // An operation the emulated service lacks answers as an unknown path does.
  if (!r.route || r.world.behaviour.missingOperations.includes(r.route.name)) {
    return {
      httpStatus: 404,
      status: undefined,
      body: `404 page not found: ${r.method} ${r.path}\n`,
      headers: { "Content-Type": "text/plain; charset=utf-8" },
    };
  }
  if (r.text === undefined) {
    return envelope(r, 413, `request body larger than ${MAX_BODY_BYTES} bytes`);
  }
  if (!r.body.json) return envelope(r, 400, "request body is not valid JSON");
  const { idFormat, subscriptionKeyFormat, timestampFormat } = r.world.behaviour;
  const numeric = idFormat === "numeric";
  try {
    const data = HANDLERS[r.route.name]({
      state: r.world,
      params: r.route.params,
      query: r.query,
      body: numeric ? idsAsText(r.body.value) : r.body.value,
    });
    const answer = timesAs(timestampFormat, emptyListAnswer(r.world, data ?? {}));
    const create = r.route.name === "createTrainingTask" || r.route.name === "subscribeNas";
    const keyAsNumber = create && subscriptionKeyFormat === "number";
    return envelope(r, 200, "OK", numeric || keyAsNumber ? idsAsNumbers(answer) : answer);
  } catch (err) {
    if (err instanceof UnknownIdRefusal) {
      return envelope(r, r.world.behaviour.unknownIdStatus, err.message);
    }
    if (err instanceof EmulatorRefusal) return envelope(r, err.status, err.message);
    r.logger?.error({ err, path: r.path }, "emulator handler failed");
    return envelope(r, 500, "Internal Server Error");
  }
}
