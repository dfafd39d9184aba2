/**
 * What a kind's own service operations (src/service/kinds/<kind>.ts) need of the
 * service client: one call of an operation of the endpoint table, its answer parsed.
 * `ServiceClient` is one; the kinds' modules depend on this interface only, so that the
 * client (which loads the endpoint table, which loads the kinds' endpoints) is not
 * imported back by them.
 */
import type { z } from "zod";

/** The parts of a request that vary per call. */
export interface OperationArgs {
  /** Values of the path's `{param}` placeholders (each must be a well-formed service id). */
  params?: Record<string, string>;
  query?: Record<string, string | number | boolean | undefined>;
  body?: unknown;
}

/** Calls operations of the endpoint table by name. */
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
   * Identifies the account the calls go to (`ServiceClient.accountScope`); a cache of
   * answers kept by a kind's module (e.g. a list snapshot) keys on it, so a caller
   * routed per object (service connections) never serves one account's answers to
   * another. Absent: one account.
   */
  readonly accountScope?: object;
}
