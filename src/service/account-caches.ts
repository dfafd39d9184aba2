/**
 * What one account remembers of the service's answers, shared by every view of its
 * client (`ServiceClient.withCall`):
 *
 * - the product catalogs: an answer younger than the TTL is reused, one in flight is
 *   shared, and a failed one is forgotten at once, so that a burst of creates of one
 *   product asks the catalog once;
 * - the list snapshots, by list operation (kind-list.ts), so that one walk per asked
 *   age serves every object of the kind whatever reconcile reads it.
 */
import type { z } from "zod";
import { ListSnapshot } from "./list-snapshot.js";
import { type Page, pageOf } from "./schemas/envelope.js";

/** The product catalogs' cache of one account; see the module comment. */
export class CatalogCache {
  private readonly answers = new Map<string, { at: number; answer: Promise<unknown> }>();

  /** `ttlMs` 0 or less reads every time; `now` is the clock (ms since the epoch). */
  constructor(
    private readonly ttlMs: number,
    private readonly now: () => number,
  ) {}

  /** The answer of `key`, from the cache or from `read()`. */
  read<T>(key: string, read: () => Promise<T>): Promise<T> {
    if (this.ttlMs <= 0) return read();
    const now = this.now();
    const hit = this.answers.get(key);
    if (hit && now - hit.at < this.ttlMs) return hit.answer as Promise<T>;
    const answer = read();
    this.answers.set(key, { at: now, answer });
    answer.catch(() => {
      if (this.answers.get(key)?.answer === answer) this.answers.delete(key);
    });
    return answer;
  }

  /** Drops every answer, so that the next read of each key asks the service. */
  forget(): void {
    this.answers.clear();
  }
}

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
