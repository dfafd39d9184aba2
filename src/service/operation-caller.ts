/**
 * What a kind's own service operations (src/service/kinds/<kind>.ts) need of the
 * service client: one call of an operation of the endpoint table, its answer parsed.
 * `AccountCalls` (account.ts) is one; the kinds' modules depend on this interface only,
 * so that the account (which loads the endpoint table, which loads the kinds' endpoints)
 * is not imported back by them.
 */
import type { z } from "zod";
import type { ListDetails } from "./list-details.js";
import type { ListSnapshot } from "./list-snapshot.js";
import type { SubscriptionResult } from "./schemas/create.js";
import type { Page } from "./schemas/data.js";

/** The parts of a request that vary per call. */
export interface OperationArgs {
  /** Values of the path's `{param}` placeholders (each must be a well-formed service id). */
  params?: Record<string, string>;
  query?: Record<string, string | number | boolean | undefined>;
  body?: unknown;
}

/**
 * What is known of an operation: `disabled` in the endpoint table (a call throws
 * `EndpointDisabledError`, nothing is sent); `missing`, the service answered it with a
 * bare HTTP 404/405 and a recheck is not due yet; `present`, it answered with an
 * envelope; `unknown`, never asked yet, or a "missing" verdict is due for a recheck.
 */
export type OperationState = "disabled" | "missing" | "present" | "unknown";

/** Calls operations of the endpoint table by name, and says what is known of them. */
export interface OperationCaller {
  /**
   * Calls operation `name` (retried when idempotent) and returns its data parsed by
   * `schema`. Throws `ServiceError` subclasses, as every operation of the client does;
   * an unknown name is a programming error (Error).
   */
  request<T>(name: string, args: OperationArgs, schema: z.ZodType<T>): Promise<T>;
  /**
   * Returns `body` when `schema` accepts it; otherwise throws
   * `ServiceInvalidRequestError` naming the failing fields, and nothing is sent.
   */
  checkedBody(name: string, schema: z.ZodType, body: unknown): unknown;
  /**
   * What is known of operation `name` (see {@link OperationState}), without a request;
   * an unknown name is a programming error (Error).
   */
  operationState(name: string): OperationState;
  /**
   * Resolves when every operation of `names` is enabled and answered by the service
   * (probed when nothing is known yet); throws `EndpointDisabledError` or
   * `ServiceOperationMissingError` naming the first that is not, and `purpose` (what
   * needs them), before anything is ordered.
   */
  requireOperations(names: readonly string[], purpose: string): Promise<void>;
}

/** The product catalogs' cache of an account (`CatalogCache` of account.ts). */
export interface CatalogReads {
  /** The answer of `key`, from the cache or from `read()`. */
  read<T>(key: string, read: () => Promise<T>): Promise<T>;
}

/** What one kind's list keeps across the pieces of work on an account. */
export interface KindListState<R> {
  readonly snapshot: ListSnapshot<R>;
  readonly pageSchema: z.ZodType<Page<R>>;
  /**
   * Fields the list may leave out of a record and its detail read showed, by id: those
   * that never change (a task's env), kept while the list shows the record.
   */
  readonly details: ListDetails<R>;
}

/** The list states of an account by list operation (`KindListStates` of kind-list.ts). */
export interface KindListStore {
  /** The state of list `operation`, made with its first use. */
  of<R>(operation: string, record: z.ZodType<R>, id: (record: R) => string): KindListState<R>;
}

/**
 * What an account's calls (`AccountCalls`) hand each kind's operations module they hold
 * (src/service/kinds/<kind>.ts): its caller (the view, with its call context), and the
 * account's clock, catalog cache, list snapshots and subscription results.
 */
export interface OperationsContext {
  readonly caller: OperationCaller;
  /** The clock of list snapshots (ms since the epoch). */
  readonly now: () => number;
  /** The product catalogs' cache of the client (`catalogTtlMs`). */
  readonly catalog: CatalogReads;
  /** The list snapshots of the account, shared by every piece of work on it. */
  readonly lists: KindListStore;
  /** Whether the service answered `operation` with a bare 404/405 (a recheck due or not). */
  readonly knownMissing: (operation: string) => boolean;
  /**
   * The result of subscription `key` through operation `name`, read with the configured
   * mapping of its shape (`subscriptionResult`); an envelope whose data cannot be read
   * is a `ServiceResultShapeError` naming the config key to set.
   */
  readonly subscriptionResult: (
    name: "getTrainingSubscriptionResult" | "getNasSubscriptionResult",
    key: string,
  ) => Promise<SubscriptionResult>;
  /** Reads a create's answer, its subscription key, with the same mapping. */
  readonly subscriptionKey: z.ZodType<string>;
}
