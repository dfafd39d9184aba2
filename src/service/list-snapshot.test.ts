import { describe, expect, it } from "vitest";
import { ListSnapshot, type ListSnapshotView, type ListWalk } from "./list-snapshot.js";
import type { PageWalkEnd } from "./pagination.js";

interface Rec {
  id: string;
  v: number;
}

/** A list whose records and failure the test sets; counts walks and pages. */
function fakeList() {
  const state = { records: [] as Rec[], fail: false, pages: 0, gate: Promise.resolve() };
  async function* walk(): AsyncGenerator<Rec, PageWalkEnd, undefined> {
    state.pages++;
    await state.gate;
    if (state.fail) throw new Error("list failed");
    for (const r of [...state.records]) yield { ...r };
    return { complete: true };
  }
  return { state, walk };
}

/** A snapshot whose every reader hands the same walk (readers' walks: kind-list.ts). */
class OneWalkSnapshot<R> extends ListSnapshot<R> {
  constructor(
    private readonly own: ListWalk<R>,
    identity: (r: R) => string,
    now: () => number,
  ) {
    super(identity, now);
  }
  override readSince(since: number, walk = this.own): Promise<ListSnapshotView<R> | undefined> {
    return super.readSince(since, walk);
  }
  override read(maxAgeMs: number, walk = this.own): Promise<ListSnapshotView<R> | undefined> {
    return super.read(maxAgeMs, walk);
  }
  override readOrThrow(maxAgeMs: number, walk = this.own): Promise<ListSnapshotView<R>> {
    return super.readOrThrow(maxAgeMs, walk);
  }
}

function setup() {
  const list = fakeList();
  const clock = { t: 1_000 };
  const snap = new OneWalkSnapshot<Rec>(
    list.walk,
    (r) => r.id,
    () => clock.t,
  );
  return { list, clock, snap };
}

describe("ListSnapshot", () => {
  it("shares one walk among every reader while it is younger than the asked age", async () => {
    const { list, clock, snap } = setup();
    list.state.records = [
      { id: "a", v: 1 },
      { id: "b", v: 2 },
    ];
    const first = await snap.read(30_000);
    expect(first?.records.get("a")).toEqual({ id: "a", v: 1 });
    expect(first?.fetchedAt).toBe(1_000);
    expect(first?.complete).toBe(true);
    clock.t += 29_999;
    list.state.records = [{ id: "a", v: 9 }];
    const again = await snap.read(30_000);
    expect(again?.records.get("b")).toEqual({ id: "b", v: 2 });
    expect(snap.walks).toBe(1);
  });

  it("walks anew once the snapshot is as old as the asked age", async () => {
    const { list, clock, snap } = setup();
    list.state.records = [{ id: "a", v: 1 }];
    await snap.read(30_000);
    clock.t += 30_000;
    list.state.records = [{ id: "a", v: 2 }];
    const fresh = await snap.read(30_000);
    expect(fresh?.records.get("a")?.v).toBe(2);
    expect(fresh?.fetchedAt).toBe(31_000);
    expect(snap.walks).toBe(2);
  });

  it("lets readers that arrive during a walk wait for it instead of starting another", async () => {
    const { list, snap } = setup();
    list.state.records = [{ id: "a", v: 1 }];
    let open = () => {};
    list.state.gate = new Promise((r) => {
      open = r;
    });
    const reads = [snap.read(1_000), snap.read(1_000), snap.read(1_000)];
    open();
    const views = await Promise.all(reads);
    expect(views.map((v) => v?.records.get("a")?.v)).toEqual([1, 1, 1]);
    expect(snap.walks).toBe(1);
    expect(list.state.pages).toBe(1);
  });

  it("answers undefined for a failed walk and does not walk again before the age has passed", async () => {
    const { list, clock, snap } = setup();
    list.state.fail = true;
    expect(await snap.read(30_000)).toBeUndefined();
    clock.t += 10_000;
    expect(await snap.read(30_000)).toBeUndefined();
    expect(snap.walks).toBe(1);
    clock.t += 20_000;
    list.state.fail = false;
    list.state.records = [{ id: "a", v: 1 }];
    expect((await snap.read(30_000))?.records.has("a")).toBe(true);
    expect(snap.walks).toBe(2);
  });

  it("drops the snapshot and a walk under way when invalidated", async () => {
    const { list, snap } = setup();
    list.state.records = [{ id: "a", v: 1 }];
    await snap.read(30_000);
    let open = () => {};
    snap.invalidate();
    list.state.gate = new Promise((r) => {
      open = r;
    });
    const during = snap.read(30_000);
    snap.invalidate();
    list.state.records = [{ id: "a", v: 2 }];
    open();
    // The walk started before the second invalidation answers its reader, but does
    // not become the snapshot: the next reader walks again and sees the change.
    await during;
    const after = await snap.read(30_000);
    expect(after?.records.get("a")?.v).toBe(2);
    expect(snap.walks).toBe(3);
  });

  it("readSince waits out a walk that started earlier and walks again, for a view that started since", async () => {
    const { list, clock, snap } = setup();
    list.state.records = [{ id: "a", v: 1 }];
    let open = () => {};
    list.state.gate = new Promise((r) => {
      open = r;
    });
    const early = snap.read(30_000);
    clock.t += 5;
    const failedReadAt = clock.t;
    const since = snap.readSince(failedReadAt);
    open();
    expect((await early)?.fetchedAt).toBe(1_000);
    const fresh = await since;
    expect(fresh?.fetchedAt).toBe(failedReadAt);
    expect(snap.walks).toBe(2);
    // A view that started at or after the asked time is shared, not walked again.
    expect((await snap.readSince(failedReadAt))?.fetchedAt).toBe(failedReadAt);
    expect(snap.walks).toBe(2);
  });

  it("readOrThrow throws the walk's error and lets the next reader walk again", async () => {
    const { list, snap } = setup();
    list.state.fail = true;
    await expect(snap.readOrThrow(30_000)).rejects.toThrow("list failed");
    list.state.fail = false;
    list.state.records = [{ id: "a", v: 1 }];
    expect((await snap.readOrThrow(30_000)).records.has("a")).toBe(true);
    expect(snap.walks).toBe(2);
  });
});
