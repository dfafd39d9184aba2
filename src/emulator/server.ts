/**
 * The emulator: a real HTTP server implementing the whole service API in memory, with
 * the spec's validation, the 403 envelope for a missing or wrong bearer key,
 * asynchronous subscriptions, fault injection, a request log and an admin API. Tests
 * start it in-process on a free loopback port; `aidc-operator emulator` runs it alone.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { Logger } from "pino";
import { ADMIN_PREFIX, adminRequest } from "./admin-api.js";
import { DEFAULT_BEHAVIOUR } from "./behaviour.js";
import { FaultInjector, type FaultRuleInput } from "./faults.js";
import { readBody, serveOperation } from "./operations.js";
import { RequestLog, type RequestLogEntry } from "./request-log.js";
import { OperationRouter } from "./router.js";
import { applySeed, type SeedInput } from "./seeding.js";
import { type EmulatorBehaviour, EmulatorState } from "./state.js";
import {
  accountIdTag,
  DEFAULT_TENANT,
  EmulatorTenants,
  emulatorIdTag,
  tenantStateLike,
} from "./tenants.js";
import { faultReply, type WireReply, writeEndlessBody } from "./wire-replies.js";

/** How to start an emulator. */
export interface EmulatorOptions extends Partial<EmulatorBehaviour> {
  /** Port to listen on; 0 (default) picks a free one. */
  port?: number;
  /** Address to listen on. Default 127.0.0.1. */
  host?: string;
  /** The bearer key every service request must carry (the account `default`). */
  apiKey: string;
  /**
   * More accounts, each with its own key and its own world (tenants.ts): what one
   * creates the others neither see nor touch.
   */
  tenants?: { name: string; apiKey: string }[];
  /** Fault rules active from the start. */
  faults?: FaultRuleInput[];
  /** Resources and catalog entries to add to the fixtures. */
  seed?: SeedInput;
  /** Seed of the random source (keys, IPs, fault draws). Default 1. */
  randomSeed?: number;
  /**
   * The tag in every id this emulator makes (`task-<tag>-000001`; an extra account's
   * `task-<tag>-b-000001`), so that two emulators never hand out the same id: objects a
   * test file leaves bound in a shared cluster cannot claim the ids of the next file's
   * emulator. Letters and digits, at most 16 (ids stay service ids,
   * src/service/schemas/primitives.ts). Default: 5 random lowercase letters and digits,
   * drawn at start outside the seeded random source; `""` for untagged ids
   * (`task-000001`), for a test that pins ids.
   */
  idTag?: string;
  /** Clock (ms since the epoch). Default Date.now. */
  now?: () => number;
  /** Entries kept by the request log. Default 20 000. */
  requestLogCapacity?: number;
  /** Debug line per request (method, path, status); never headers. */
  logger?: Logger;
  /**
   * How long the server keeps an idle keep-alive connection open before closing it
   * (Node 24's default: 5 s announced, closed after 6). When set, it is the exact close
   * time and the answers announce no `Keep-Alive: timeout=` hint, as many proxies do
   * not: the client must close idle connections by its own setting.
   */
  keepAliveTimeoutMs?: number;
}

/** A running emulator. */
export interface RunningEmulator {
  /** `http://host:port` plus the base path, the base URL for a `ServiceClient` (and the admin API). */
  url: string;
  port: number;
  host: string;
  /** The tag in every id this emulator makes (see EmulatorOptions.idTag). */
  idTag: string;
  /** The in-memory world of the account `default`, for in-process inspection and changes. */
  state: EmulatorState;
  /** Every account (API key → its own world). */
  tenants: EmulatorTenants;
  faults: FaultInjector;
  requestLog: RequestLog;
  /** Replaces the accepted API key of the account `default`. */
  setApiKey(key: string): void;
  /** Closes the server and every open connection. */
  stop(): Promise<void>;
}

/** Starts an emulator; resolves once it listens. */
export async function startEmulator(options: EmulatorOptions): Promise<RunningEmulator> {
  const {
    port = 0,
    host = "127.0.0.1",
    faults: initialFaults,
    seed,
    randomSeed = 1,
    now,
    logger,
  } = options;
  const apiKey = options.apiKey;
  if (!apiKey) throw new Error("the emulator needs an API key to accept");
  const behaviour: Partial<EmulatorBehaviour> = {};
  for (const k of Object.keys(DEFAULT_BEHAVIOUR) as (keyof EmulatorBehaviour)[]) {
    if (options[k] !== undefined) Object.assign(behaviour, { [k]: options[k] });
  }
  const idTag = emulatorIdTag(options.idTag);
  const state = new EmulatorState(behaviour, randomSeed, now, accountIdTag(idTag));
  if (seed) applySeed(state, seed);
  const faults = new FaultInjector(state.random);
  if (initialFaults) faults.set(initialFaults);
  const requestLog = new RequestLog(options.requestLogCapacity);
  const router = new OperationRouter();
  const tenants = new EmulatorTenants(state, apiKey, (name) => {
    const world = tenantStateLike(state, randomSeed, accountIdTag(idTag, name));
    if (seed) applySeed(world, seed);
    return world;
  });
  for (const t of options.tenants ?? []) tenants.set(t.name, t.apiKey);
  const setApiKey = (key: string) => {
    tenants.set(DEFAULT_TENANT, key);
  };

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const started = performance.now();
    const url = new URL(req.url ?? "/", "http://emulator");
    const method = (req.method ?? "GET").toUpperCase();
    const text = await readBody(req);
    const send = (httpStatus: number, body: string, headers: Record<string, string> = {}) => {
      res.writeHead(httpStatus, { "Content-Type": "application/json; charset=utf-8", ...headers });
      res.end(body);
    };
    // The service API under the base path (`opPath` undefined outside it); the admin
    // API at the root and under the base path.
    const base = state.behaviour.basePath.replace(/\/+$/, "");
    const opPath =
      base === ""
        ? url.pathname
        : url.pathname.startsWith(`${base}/`)
          ? url.pathname.slice(base.length)
          : undefined;
    const adminPath = [opPath, url.pathname].find(
      (p) => p !== undefined && (p === ADMIN_PREFIX || p.startsWith(`${ADMIN_PREFIX}/`)),
    );
    if (adminPath !== undefined) {
      const reply = adminRequest(
        { faults, log: requestLog, tenants },
        method,
        adminPath,
        url.searchParams,
        text,
      );
      send(reply.httpStatus, JSON.stringify(reply.body));
      return;
    }

    const authorization = req.headers.authorization ?? "";
    const account = authorization.startsWith("Bearer ")
      ? tenants.byKey(authorization.slice("Bearer ".length))
      : undefined;
    // The caller's account's world; a refused key sees none (it is answered 403).
    const world = account?.state ?? state;
    world.advance();
    const route = opPath === undefined ? undefined : router.match(method, opPath);
    const entry: Omit<RequestLogEntry, "seq"> = {
      time: new Date(state.now()).toISOString(),
      method,
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      authorized: account !== undefined,
      ...(account ? { tenant: account.name } : {}),
      ...(route ? { endpoint: route.name } : {}),
    };
    let parsedBody: unknown;
    let bodyIsJson = true;
    if (text) {
      try {
        parsedBody = JSON.parse(text);
      } catch {
        bodyIsJson = false;
        parsedBody = text.slice(0, 4096);
      }
      entry.body = parsedBody;
    }
    const finish = (reply: WireReply) => {
      entry.httpStatus = reply.httpStatus;
      if (reply.status !== undefined) entry.status = reply.status;
      entry.durationMs = Math.round(performance.now() - started);
      requestLog.add(entry);
      logger?.debug(
        {
          method,
          path: url.pathname,
          status: reply.status,
          httpStatus: reply.httpStatus,
          fault: entry.fault,
        },
        "emulator request",
      );
      send(reply.httpStatus, reply.body, reply.headers);
    };
    /** The service's own answer (the request takes effect here). */
    const serve = (): WireReply =>
      serveOperation({
        world,
        route,
        method,
        path: url.pathname,
        query: url.searchParams,
        authorized: entry.authorized,
        text,
        body: { json: bodyIsJson, value: parsedBody },
        mirror: state.behaviour.httpStatusMirrorsEnvelope,
        logger,
      });

    const decision = faults.decide({ endpoint: route?.name, method, path: opPath ?? url.pathname });
    if (decision.latencyMs > 0) await new Promise((r) => setTimeout(r, decision.latencyMs));
    const fault = decision.fault;
    // An acting fault lets the request take effect and answers the fault instead.
    const reply = fault && !fault.acting ? undefined : serve();
    if (!fault) {
      finish(reply as WireReply);
      return;
    }
    const sentKey = (req.headers.authorization ?? "").replace(/^Bearer /, "");
    const applied = faultReply(fault, state.behaviour.httpStatusMirrorsEnvelope, sentKey);
    entry.fault = fault.kind;
    if (fault.acting) entry.acted = true;
    if (applied === "drop" || applied === "endless") {
      requestLog.add({ ...entry, durationMs: Math.round(performance.now() - started) });
      if (applied === "drop") req.socket.destroy();
      else await writeEndlessBody(res);
      return;
    }
    finish(applied);
  }

  const keepAliveTimeoutMs = options.keepAliveTimeoutMs;
  const server = createServer((req, res) => {
    // Set by hand, the Connection header keeps Node from announcing its timeout.
    if (keepAliveTimeoutMs !== undefined) res.setHeader("Connection", "keep-alive");
    handle(req, res).catch((err: unknown) => {
      logger?.error({ err }, "emulator request failed");
      if (!res.headersSent) res.writeHead(500).end();
      else res.destroy();
    });
  });
  if (keepAliveTimeoutMs !== undefined) {
    server.keepAliveTimeout = keepAliveTimeoutMs;
    // Node 24 waits this much longer than announced; the setting is the real close.
    server.keepAliveTimeoutBuffer = 0;
  }
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const urlHost = host.includes(":") ? `[${host}]` : host;
  return {
    url: `http://${urlHost}:${address.port}${state.behaviour.basePath.replace(/\/+$/, "")}`,
    port: address.port,
    host,
    idTag,
    state,
    tenants,
    faults,
    requestLog,
    setApiKey,
    stop: () =>
      new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        server.closeAllConnections();
      }),
  };
}
