/**
 * The shapes of an envelope's `data` that operations share: the paged list
 * `{records, pageNo, pageSize, totalRows}` (as the CCI list documents it), a plain
 * list, and data that is not read. The envelope itself is read in ../transport.ts.
 */
import { z } from "zod";
import { optionalInt } from "./primitives.js";

/** A page of a paged list. */
export interface Page<T> {
  records: T[];
  /** Page number, from 1. */
  pageNo?: number | undefined;
  pageSize?: number | undefined;
  /** Total rows over all pages, when the service says. */
  totalRows?: number | undefined;
}

/**
 * A paged list of `item`. Tolerates the variants a list operation without a documented
 * shape may use: a bare array, `list`/`rows`/`items` instead of `records`,
 * `total`/`totalCount` instead of `totalRows`, and `null` or `{}` for an empty page.
 */
export function pageOf<T extends z.ZodType>(item: T) {
  return z.preprocess(
    (v) => {
      if (Array.isArray(v)) return { records: v, totalRows: v.length };
      // Nothing to list may come as `null`, as `{}` does: an empty page.
      if (v === null) return { records: [] };
      if (typeof v !== "object") return v;
      const o = v as Record<string, unknown>;
      return {
        records: o.records ?? o.list ?? o.rows ?? o.items ?? [],
        pageNo: o.pageNo ?? o.current ?? o.page,
        pageSize: o.pageSize ?? o.size,
        totalRows: o.totalRows ?? o.total ?? o.totalCount,
      };
    },
    z.object({
      records: z.preprocess((r) => (r === null ? [] : r), z.array(item)),
      pageNo: optionalInt,
      pageSize: optionalInt,
      totalRows: optionalInt,
    }),
  );
}

/** Data of operations whose answer is not read (an empty object, or anything). */
export const emptyData = z.unknown().transform((): void => undefined);

/** An array of `item`; null reads as empty. */
export function listOf<T extends z.ZodType>(item: T) {
  return z.preprocess((v) => (v === null ? [] : v), z.array(item));
}
