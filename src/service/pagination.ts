/**
 * Walking a paged list page by page. The service documents `pageNo` from 1 and a
 * `totalRows` count but no default or maximum page size, so the walk stops on the
 * first of: an empty page, `totalRows` reached (or, without it, a page shorter than
 * its page size), or a page the service numbered differently from the one asked for
 * (it ignored `pageNo`).
 *
 * Offset paging over a list that changes while it is walked repeats a record on the next
 * page when one is inserted before it; the walk yields each identity once, so a lookup
 * never sees the same resource twice.
 */
import type { Page } from "./schemas/envelope.js";

/** Page size the iterators ask for. The spec shows no default or maximum. */
export const DEFAULT_ITERATION_PAGE_SIZE = 50;

/** Safety stop: no list is walked beyond this many pages. */
export const MAX_PAGES = 10_000;

/**
 * Yields every record of a paged list once, fetching pages lazily from page 1.
 * `identity` names a record (its id): a record whose identity was already yielded on an
 * earlier page is skipped. `pageSize` defaults to `DEFAULT_ITERATION_PAGE_SIZE`.
 */
export async function* paginate<T>(
  fetchPage: (pageNo: number, pageSize: number) => Promise<Page<T>>,
  identity: (record: T) => string,
  pageSize = DEFAULT_ITERATION_PAGE_SIZE,
): AsyncGenerator<T, void, undefined> {
  let seen = 0;
  const yielded = new Set<string>();
  for (let pageNo = 1; pageNo <= MAX_PAGES; pageNo++) {
    const page = await fetchPage(pageNo, pageSize);
    if (page.pageNo !== undefined && page.pageNo !== pageNo) return;
    for (const record of page.records) {
      const id = identity(record);
      if (yielded.has(id)) continue;
      yielded.add(id);
      yield record;
    }
    seen += page.records.length;
    if (page.records.length === 0) return;
    // totalRows is the reliable end; without it a short page is (the service may cap
    // the size it was asked for, and then says so in pageSize).
    if (page.totalRows !== undefined) {
      if (seen >= page.totalRows) return;
    } else if (page.records.length < (page.pageSize ?? pageSize)) {
      return;
    }
  }
}
