/**
 * Walking a paged list page by page. The service documents `pageNo` from 1 and a
 * `totalRows` count but no default or maximum page size, so the walk stops on the
 * first of: an empty page, `totalRows` reached (or, without it, a page shorter than
 * its page size), or a page the service numbered differently from the one asked for
 * (it ignored `pageNo`).
 *
 * Offset paging over a list that changes while it is walked repeats a record on the next
 * page when one is inserted before it, and skips one when one before it is deleted; the
 * walk yields each identity once, so a lookup never sees the same resource twice, and a
 * walk whose `totalRows` changed between pages is not complete (proves nothing absent).
 */
import { clientTokenInDescription } from "./schemas/create.js";
import type { Page } from "./schemas/data.js";

/** Page size the iterators ask for. The spec shows no default or maximum. */
export const DEFAULT_ITERATION_PAGE_SIZE = 50;

/** Safety stop: no list is walked beyond this many pages. */
export const MAX_PAGES = 10_000;

/** How a walk of a paged list ended. */
export interface PageWalkEnd {
  /**
   * True when the walk reached the end of the list (an empty page, `totalRows` reached
   * with as many distinct records, or a short page without `totalRows`); false when it
   * stopped early (the service ignored `pageNo`, the page limit), saw fewer distinct
   * records than `totalRows` says (a record moved while the list was walked), or saw
   * `totalRows` change between pages (records were added or deleted meanwhile: offset
   * paging then skips a record when one before it goes).
   */
  complete: boolean;
}

/**
 * Yields every record of a paged list once, fetching pages lazily from page 1, and
 * returns how the walk ended. `identity` names a record (its id): a record whose
 * identity was already yielded on an earlier page is skipped. `pageSize` defaults to
 * `DEFAULT_ITERATION_PAGE_SIZE`. A first page shorter than asked while `totalRows` says
 * more follow means the service caps the page size: the walk goes on asking for the
 * size it got, so that a service counting pages in the asked size skips nothing.
 */
export async function* paginate<T>(
  fetchPage: (pageNo: number, pageSize: number) => Promise<Page<T>>,
  identity: (record: T) => string,
  pageSize = DEFAULT_ITERATION_PAGE_SIZE,
): AsyncGenerator<T, PageWalkEnd, undefined> {
  let seen = 0;
  let size = pageSize;
  const yielded = new Set<string>();
  // The first totalRows given: another on a later page means the list changed meanwhile.
  let total: number | undefined;
  let changed = false;
  for (let pageNo = 1; pageNo <= MAX_PAGES; pageNo++) {
    const page = await fetchPage(pageNo, size);
    if (page.pageNo !== undefined && page.pageNo !== pageNo) return { complete: false };
    if (page.totalRows !== undefined) {
      total ??= page.totalRows;
      if (page.totalRows !== total) changed = true;
    }
    for (const record of page.records) {
      const id = identity(record);
      if (yielded.has(id)) continue;
      yielded.add(id);
      yield record;
    }
    seen += page.records.length;
    if (page.records.length === 0) return { complete: !changed };
    // totalRows is the reliable end; without it a short page is (the service may cap
    // the size it was asked for, and then says so in pageSize).
    if (page.totalRows !== undefined) {
      if (seen >= page.totalRows) return { complete: !changed && yielded.size >= page.totalRows };
      if (pageNo === 1 && page.records.length < size) size = page.records.length;
    } else if (page.records.length < (page.pageSize ?? size)) {
      return { complete: true };
    }
  }
  return { complete: false };
}

/** The identities of the records of a paged list, and whether the walk was complete. */
export interface ListedIds extends PageWalkEnd {
  ids: Set<string>;
}

/** The records of a paged list by identity, and whether the walk was complete. */
export interface ListedRecords<T> extends PageWalkEnd {
  records: Map<string, T>;
}

/** Walks `walk` to its end and collects its records by identity. */
export async function listRecords<T>(
  walk: AsyncGenerator<T, PageWalkEnd, undefined>,
  identity: (record: T) => string,
): Promise<ListedRecords<T>> {
  const records = new Map<string, T>();
  for (;;) {
    const next = await walk.next();
    if (next.done) return { records, complete: next.value.complete };
    records.set(identity(next.value), next.value);
  }
}

/** Walks `walk` to its end and collects the identities of its records. */
export async function listIdentities<T>(
  walk: AsyncGenerator<T, PageWalkEnd, undefined>,
  identity: (record: T) => string,
): Promise<ListedIds> {
  const { records, complete } = await listRecords(walk, identity);
  return { ids: new Set(records.keys()), complete };
}

/**
 * Whether `walk` (one walk, started now) proves that no record is the one `sought`
 * looks for: the walk was complete and every record carries the field `sought` reads
 * (`carries`); a record without it, or an incomplete walk, proves nothing.
 */
export async function walkProvesAbsent<T>(
  walk: AsyncGenerator<T, PageWalkEnd, undefined>,
  carries: (record: T) => boolean,
  sought: (record: T) => boolean,
): Promise<boolean> {
  let carried = true;
  let found = false;
  for (;;) {
    const next = await walk.next();
    if (next.done) return next.value.complete && carried && !found;
    if (!carries(next.value)) carried = false;
    if (sought(next.value)) found = true;
  }
}

/**
 * {@link walkProvesAbsent} for a create's client token, which travels at the end of
 * the description (schemas/create.ts): every record must carry a description.
 */
export function walkProvesTokenAbsent<T extends { description?: string | undefined }>(
  walk: AsyncGenerator<T, PageWalkEnd, undefined>,
  token: string,
): Promise<boolean> {
  return walkProvesAbsent(
    walk,
    (r) => r.description !== undefined,
    (r) => clientTokenInDescription(r.description) === token,
  );
}

/**
 * The identities of the records of `walk` whose description carries the marker of the
 * client token `token` (schemas/create.ts).
 */
export async function idsCarryingToken<T extends { description?: string | undefined }>(
  walk: AsyncGenerator<T, PageWalkEnd, undefined>,
  token: string,
  identity: (record: T) => string,
): Promise<string[]> {
  const ids: string[] = [];
  for await (const record of walk) {
    if (clientTokenInDescription(record.description) === token) ids.push(identity(record));
  }
  return ids;
}
