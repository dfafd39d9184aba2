/**
 * Walking a paged list page by page. The service documents `pageNo` from 1 and a
 * `totalRows` count but no default or maximum page size, so the walk stops on the
 * first of: an empty page, `totalRows` reached (or, without it, a page shorter than
 * its page size), or a page the service numbered differently from the one asked for
 * (it ignored `pageNo`).
 */
import type { Page } from "./schemas/envelope.js";

/** Page size the iterators ask for. The spec shows no default or maximum. */
export const DEFAULT_ITERATION_PAGE_SIZE = 50;

/** Safety stop: no list is walked beyond this many pages. */
export const MAX_PAGES = 10_000;

/** Yields every record of a paged list, fetching pages lazily from `startPage`. */
export async function* paginate<T>(
  fetchPage: (pageNo: number, pageSize: number) => Promise<Page<T>>,
  pageSize = DEFAULT_ITERATION_PAGE_SIZE,
  startPage = 1,
): AsyncGenerator<T, void, undefined> {
  let seen = 0;
  for (let pageNo = startPage; pageNo < startPage + MAX_PAGES; pageNo++) {
    const page = await fetchPage(pageNo, pageSize);
    if (page.pageNo !== undefined && page.pageNo !== pageNo) return;
    for (const record of page.records) yield record;
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
