import { describe, expect, it } from "vitest";
import { listRecords, paginate, walkProvesTokenAbsent } from "./pagination.js";
import { withClientTokenMarker } from "./schemas/create.js";
import type { Page } from "./schemas/data.js";

function pagesOf(rows: number[], pageSizeCap = Number.POSITIVE_INFINITY, withTotal = true) {
  const asked: number[] = [];
  const fetchPage = async (pageNo: number, pageSize: number): Promise<Page<number>> => {
    asked.push(pageNo);
    const size = Math.min(pageSize, pageSizeCap);
    const records = rows.slice((pageNo - 1) * size, pageNo * size);
    return { records, pageNo, pageSize: size, ...(withTotal ? { totalRows: rows.length } : {}) };
  };
  return { asked, fetchPage };
}

async function all<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
}

const rows = Array.from({ length: 23 }, (_, i) => i);

describe("paginate", () => {
  it("yields every record over all pages and stops at totalRows", async () => {
    const { asked, fetchPage } = pagesOf(rows);
    expect(await all(paginate(fetchPage, String, 10))).toEqual(rows);
    expect(asked).toEqual([1, 2, 3]);
  });

  it("keeps going when the service caps the page size below the one asked for", async () => {
    const { fetchPage } = pagesOf(rows, 5);
    expect(await all(paginate(fetchPage, String, 10))).toEqual(rows);
  });

  it("stops at a short page when the service gives no total", async () => {
    const { asked, fetchPage } = pagesOf(rows, Number.POSITIVE_INFINITY, false);
    expect(await all(paginate(fetchPage, String, 10))).toEqual(rows);
    expect(asked).toEqual([1, 2, 3]);
  });

  it("stops when the service ignores pageNo instead of looping forever", async () => {
    let calls = 0;
    const fetchPage = async (): Promise<Page<number>> => {
      calls++;
      return { records: [1, 2], pageNo: 1, pageSize: 2 };
    };
    expect(await all(paginate(fetchPage, String, 2))).toEqual([1, 2]);
    expect(calls).toBe(2);
  });

  it("yields a record once when a list that changes while it is walked repeats it on the next page", async () => {
    // Offset paging: a record inserted at the head after page 1 was read shifts the
    // last record of page 1 onto page 2.
    const pages: Record<number, Page<{ id: string }>> = {
      1: { records: [{ id: "a" }, { id: "b" }], pageNo: 1, pageSize: 2, totalRows: 5 },
      2: { records: [{ id: "b" }, { id: "c" }], pageNo: 2, pageSize: 2, totalRows: 5 },
      3: { records: [{ id: "d" }], pageNo: 3, pageSize: 2, totalRows: 5 },
    };
    const fetchPage = async (pageNo: number) => pages[pageNo] ?? { records: [] };
    const ids = (await all(paginate(fetchPage, (r) => r.id, 2))).map((r) => r.id);
    expect(ids).toEqual(["a", "b", "c", "d"]);
  });

  it("fetches nothing more than needed when the consumer stops early", async () => {
    const { asked, fetchPage } = pagesOf(rows);
    for await (const x of paginate(fetchPage, String, 10)) if (x === 3) break;
    expect(asked).toEqual([1]);
  });

  it("asks for the size the service served when it caps pages and counts them in the asked size", async () => {
    // A service that serves at most 5 records but offsets by the size it was asked for.
    const asked: [number, number][] = [];
    const fetchPage = async (pageNo: number, pageSize: number): Promise<Page<number>> => {
      asked.push([pageNo, pageSize]);
      const records = rows.slice((pageNo - 1) * pageSize, (pageNo - 1) * pageSize + 5);
      return { records, pageNo, pageSize, totalRows: rows.length };
    };
    expect(await all(paginate(fetchPage, String, 10))).toEqual(rows);
    expect(asked.slice(0, 2)).toEqual([
      [1, 10],
      [2, 5],
    ]);
  });

  it("returns whether the walk reached the end of the list", async () => {
    const ids = (fetchPage: Parameters<typeof paginate<number>>[0]) =>
      listRecords(paginate(fetchPage, String, 10), String);
    expect((await ids(pagesOf(rows).fetchPage)).complete).toBe(true);
    expect((await ids(pagesOf(rows, 5, false).fetchPage)).complete).toBe(true);
    const ignoresPageNo = async (): Promise<Page<number>> => ({
      records: rows.slice(0, 10),
      pageNo: 1,
      pageSize: 10,
      totalRows: rows.length,
    });
    expect(await ids(ignoresPageNo)).toMatchObject({ complete: false });
    // A record moved while the list was walked: page 2 repeats one, one is never seen.
    const shifting = async (pageNo: number): Promise<Page<number>> =>
      pageNo === 1
        ? { records: [1, 2], pageNo, pageSize: 2, totalRows: 3 }
        : { records: [2], pageNo, pageSize: 2, totalRows: 3 };
    const listed = await listRecords(paginate(shifting, String, 2), String);
    expect(listed).toEqual({
      records: new Map([
        ["1", 1],
        ["2", 2],
      ]),
      complete: false,
    });
    // A record of page 1 deleted after it was read: page 2 starts one later, so 3 is
    // never seen though as many distinct records as the new totalRows were.
    const shrinking = async (pageNo: number): Promise<Page<number>> =>
      pageNo === 1
        ? { records: [1, 2], pageNo, pageSize: 2, totalRows: 5 }
        : { records: pageNo === 2 ? [4, 5] : [], pageNo, pageSize: 2, totalRows: 4 };
    expect(await ids(shrinking)).toMatchObject({ complete: false });
    const emptied = async (pageNo: number): Promise<Page<number>> =>
      pageNo === 1
        ? { records: [1], pageNo, pageSize: 1, totalRows: 2 }
        : { records: [], pageNo, pageSize: 1, totalRows: 1 };
    expect(await ids(emptied)).toMatchObject({ complete: false });
  });
});

describe("walkProvesTokenAbsent", () => {
  type Listed = { id: number; description?: string };
  // An incomplete walk: the service ignores pageNo, answering page 1 again.
  const walk = (records: Listed[], complete = true) =>
    paginate<Listed>(
      async (pageNo) =>
        complete
          ? { records: pageNo === 1 ? records : [], pageNo, totalRows: records.length }
          : { records, pageNo: 1, totalRows: records.length + 1 },
      (r) => String(r.id),
      10,
    );
  const marked = (id: number, token: string) => ({
    id,
    description: withClientTokenMarker("d", token),
  });

  it("proves absent a token no record carries, from a complete walk whose records all have a description", async () => {
    expect(
      await walkProvesTokenAbsent(walk([marked(1, "a"), { id: 2, description: "" }]), "b"),
    ).toBe(true);
    expect(await walkProvesTokenAbsent(walk([]), "b")).toBe(true);
  });

  it.each([
    ["a record carries it", [marked(1, "a"), marked(2, "b")], true],
    ["a record has no description", [marked(1, "a"), { id: 2 }], true],
    ["the walk was incomplete", [marked(1, "a")], false],
  ])("proves nothing when %s", async (_why, records: Listed[], complete: boolean) => {
    expect(await walkProvesTokenAbsent(walk(records, complete), "b")).toBe(false);
  });
});
