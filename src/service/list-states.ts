/**
 * The list snapshots of one account, by list operation (kind-list.ts): shared by every
 * view of the account's client (`ServiceClient.withCall`), so that one walk per asked
 * age serves every object of the kind whatever reconcile reads it.
 */
import type { z } from "zod";
import { ListSnapshot } from "./list-snapshot.js";
import { type Page, pageOf } from "./schemas/envelope.js";

/** What one kind's list keeps across the views of an account's client. */
export interface KindListState<R> {
  readonly snapshot: ListSnapshot<R>;
  readonly pageSchema: z.ZodType<Page<R>>;
}

/** The list states of one account, by list operation: its snapshots and page schemas. */
export class KindListStates {
  private readonly states = new Map<string, KindListState<unknown>>();

  /** `now` is the snapshots' clock (ms since the epoch). */
  constructor(private readonly now: () => number) {}

  /** The state of list `operation`, made with its first use. */
  of<R>(operation: string, record: z.ZodType<R>, id: (record: R) => string): KindListState<R> {
    let state = this.states.get(operation) as KindListState<R> | undefined;
    if (!state) {
      state = {
        snapshot: new ListSnapshot<R>(id, this.now),
        pageSchema: pageOf(record) as unknown as z.ZodType<Page<R>>,
      };
      this.states.set(operation, state as KindListState<unknown>);
    }
    return state;
  }
}
