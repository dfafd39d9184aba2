/**
 * What an emulator operation handler receives and how it refuses: a handler returns
 * the envelope's `data` or throws `EmulatorRefusal` with an envelope status and a
 * message that says what was wrong.
 */
import type { z } from "zod";
import { describeIssues } from "../service/schemas/primitives.js";
import type { ListOrder } from "./behaviour.js";
import type { EmulatorState } from "./state.js";

/** The input of one handled request. */
export interface HandlerContext {
  state: EmulatorState;
  /** Path parameters by placeholder name. */
  params: Record<string, string>;
  query: URLSearchParams;
  /** The parsed JSON body (undefined without one). */
  body: unknown;
}

/** An operation of the emulated service. */
export type Handler = (ctx: HandlerContext) => unknown;

/** A refusal: answered as an envelope with `status` and `message`. */
export class EmulatorRefusal extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = "EmulatorRefusal";
  }
}

/**
 * A refusal of an unknown id: 404, which the server turns into the behaviour's
 * `unknownIdStatus` (a service may answer 500).
 */
export class UnknownIdRefusal extends EmulatorRefusal {}

/** 404 for an unknown id (see {@link UnknownIdRefusal}). */
export function notFound(what: string, id: string): EmulatorRefusal {
  return new UnknownIdRefusal(404, `${what} ${id} not found`);
}

/**
 * The record the path's `id` names in `records`; {@link notFound} naming `what` (e.g.
 * "training task") when there is none, or none the service knows yet (its `knownAt`).
 */
export function recordOfPathId<R extends object>(
  ctx: HandlerContext,
  records: ReadonlyMap<string, R>,
  what: string,
): R {
  const id = ctx.params.id ?? "";
  const record = records.get(id);
  if (record === undefined || !ctx.state.isKnown(record)) throw notFound(what, id);
  return record;
}

/**
 * Answers a delete of `what` `id` that is already being deleted: nothing (it changes
 * nothing), or a refusal with the behaviour's `repeatDeleteStatus`.
 */
export function repeatedDelete(state: EmulatorState, what: string, id: string): void {
  const status = state.behaviour.repeatDeleteStatus;
  if (status > 0) throw new EmulatorRefusal(status, `${what} ${id} is already being released`);
}

/** 400 with a message. */
export function badRequest(message: string): EmulatorRefusal {
  return new EmulatorRefusal(400, message);
}

/** 409 with a message. */
export function conflict(message: string): EmulatorRefusal {
  return new EmulatorRefusal(409, message);
}

/** The body validated by `schema`, or a 400 naming the failing fields. */
export function parseBody<T>(schema: z.ZodType<T>, body: unknown): T {
  const parsed = schema.safeParse(body ?? {});
  if (!parsed.success) throw badRequest(`invalid request: ${describeIssues(parsed.error, "body")}`);
  return parsed.data;
}

/** An optional integer query parameter, or a 400 when it is not an integer. */
export function queryInt(query: URLSearchParams, name: string): number | undefined {
  const raw = query.get(name);
  if (raw === null || raw === "") return undefined;
  if (!/^-?\d+$/.test(raw))
    throw badRequest(`query parameter ${name} must be an integer, got "${raw}"`);
  return Number(raw);
}

/** An optional string query parameter ("" counts as absent). */
export function queryText(query: URLSearchParams, name: string): string | undefined {
  const raw = query.get(name);
  return raw === null || raw === "" ? undefined : raw;
}

/** Default and maximum page sizes of the emulator's lists (the spec shows neither). */
export const PAGE_SIZE = { default: 10, max: 500 } as const;

/**
 * One page of `items` per the pageNo (from 1) and pageSize query parameters. With the
 * behaviour's `pageSizeCap`, a larger pageSize is silently lowered to the cap (pages
 * are counted in the capped size, which the answer echoes). With its
 * `listShrinksAfterFirstPage`, pages after the first are those of the list less that
 * many records before them; with `listGrowsAfterFirstPage`, of the list with that many
 * more (first under `newestFirst`, else last), which are not shown.
 */
export function pageOfRecords<T>(
  items: T[],
  ctx: Pick<HandlerContext, "query" | "state">,
): { records: T[]; pageNo: number; pageSize: number; totalRows: number } {
  const { query } = ctx;
  const pageNo = queryInt(query, "pageNo") ?? 1;
  const asked = queryInt(query, "pageSize") ?? PAGE_SIZE.default;
  if (pageNo < 1) throw badRequest(`pageNo starts at 1, got ${pageNo}`);
  if (asked < 1 || asked > PAGE_SIZE.max) {
    throw badRequest(`pageSize must be between 1 and ${PAGE_SIZE.max}, got ${asked}`);
  }
  const { pageSizeCap: cap, listOrder, ...changes } = ctx.state.behaviour;
  const pageSize = cap > 0 ? Math.min(asked, cap) : asked;
  const shrunk = pageNo > 1 ? Math.min(changes.listShrinksAfterFirstPage, items.length) : 0;
  const grown = pageNo > 1 ? changes.listGrowsAfterFirstPage : 0;
  // Records made since page 1 push the others down only where they land first.
  const end = pageNo * pageSize + shrunk - (listOrder === "newestFirst" ? grown : 0);
  const start = Math.max(0, end - pageSize);
  return {
    records: inListOrder(items, listOrder).slice(start, Math.max(start, end)),
    pageNo,
    pageSize,
    totalRows: items.length - shrunk + grown,
  };
}

/** The name of a listed record (a template's is in its wire fields). */
function nameOf(record: unknown): string {
  const r = record as { name?: unknown; fields?: { name?: unknown } };
  return String(r.name ?? r.fields?.name ?? "");
}

/** `items` (as made) in the list order `order` (see EmulatorBehaviour.listOrder). */
export function inListOrder<T>(items: T[], order: ListOrder): T[] {
  if (order === "newestFirst") return [...items].reverse();
  if (order === "byName") {
    return [...items].sort((a, b) => {
      const [x, y] = [nameOf(a), nameOf(b)];
      return x < y ? -1 : x > y ? 1 : 0;
    });
  }
  return items;
}

/** Case-insensitive substring match ("fuzzy match on name"); true when `needle` is absent. */
export function fuzzyMatch(value: string | undefined, needle: string | undefined): boolean {
  if (needle === undefined) return true;
  return (value ?? "").toLowerCase().includes(needle.toLowerCase());
}

/**
 * A record as a list answers it: without `description` under the behaviour's
 * `listsOmitDescription`, without `env` under `listsOmitEnv` (the detail keeps both).
 */
export function listedRecord(
  record: Record<string, unknown>,
  state: Pick<EmulatorState, "behaviour">,
): Record<string, unknown> {
  const { listsOmitDescription, listsOmitEnv } = state.behaviour;
  if (!listsOmitDescription && !listsOmitEnv) return record;
  return Object.fromEntries(
    Object.entries(record).filter(
      ([k]) => !(listsOmitDescription && k === "description") && !(listsOmitEnv && k === "env"),
    ),
  );
}
