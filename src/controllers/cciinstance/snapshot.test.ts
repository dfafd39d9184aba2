import { describe, expect, it } from "vitest";
import type { PageWalkEnd } from "../../service/pagination.js";
import type { CciInstance } from "../../service/schemas/cci.js";
import { CciSnapshot } from "./snapshot.js";

function lister(records: CciInstance[]) {
  const calls = { walks: 0 };
  let release: (() => void) | undefined;
  const gate = { hold: false };
  return {
    calls,
    gate,
    releaseWalk: () => release?.(),
    async *iterate(): AsyncGenerator<CciInstance, PageWalkEnd, undefined> {
      calls.walks += 1;
      if (gate.hold) await new Promise<void>((r) => (release = r));
      for (const r of records) yield r;
      return { complete: true };
    },
  };
}

describe("CciSnapshot", () => {
  it("walks the list once per TTL and serves every reader from that walk", async () => {
    let now = 1_000;
    const l = lister([{ id: "a" }, { id: "b" }]);
    const snap = new CciSnapshot({ ttlMs: 100, now: () => now });
    const first = await snap.get(l);
    now += 99;
    const second = await snap.get(l);
    expect(l.calls.walks).toBe(1);
    expect(second).toBe(first);
    expect([...first.byId.keys()]).toEqual(["a", "b"]);
    now += 1;
    await snap.get(l);
    expect(l.calls.walks).toBe(2);
  });

  it("lets concurrent readers wait for the one walk in flight", async () => {
    const l = lister([{ id: "a" }]);
    l.gate.hold = true;
    const snap = new CciSnapshot({ ttlMs: 100, now: () => 0 });
    const readers = [snap.get(l), snap.get(l), snap.get(l)];
    await new Promise((r) => setTimeout(r, 0));
    l.releaseWalk();
    const views = await Promise.all(readers);
    expect(l.calls.walks).toBe(1);
    expect(new Set(views).size).toBe(1);
  });

  it("records the start of the walk as the time of the view", async () => {
    const snap = new CciSnapshot({ ttlMs: 100, now: () => 5_000 });
    expect((await snap.get(lister([]))).fetchedAt.getTime()).toBe(5_000);
  });

  it("walks again after a failed walk instead of caching the failure", async () => {
    let fail = true;
    const l = {
      async *iterate(): AsyncGenerator<CciInstance, PageWalkEnd, undefined> {
        if (fail) throw new Error("list failed");
        yield { id: "a" };
        return { complete: true };
      },
    };
    const snap = new CciSnapshot({ ttlMs: 100, now: () => 0 });
    await expect(snap.get(l)).rejects.toThrow("list failed");
    fail = false;
    expect((await snap.get(l)).byId.has("a")).toBe(true);
  });

  it("walks again after invalidate", async () => {
    const l = lister([]);
    const snap = new CciSnapshot({ ttlMs: 1_000, now: () => 0 });
    await snap.get(l);
    snap.invalidate();
    await snap.get(l);
    expect(l.calls.walks).toBe(2);
  });

  it("does not keep a walk that started before invalidate", async () => {
    let records: CciInstance[] = [{ id: "old" }];
    let release = () => {};
    const gate = new Promise<void>((r) => {
      release = r;
    });
    const l = {
      async *iterate(): AsyncGenerator<CciInstance, PageWalkEnd, undefined> {
        const seen = records;
        await gate;
        for (const r of seen) yield r;
        return { complete: true };
      },
    };
    const snap = new CciSnapshot({ ttlMs: 1_000, now: () => 0 });
    const during = snap.get(l);
    snap.invalidate();
    records = [{ id: "new" }];
    release();
    expect((await during).byId.has("old")).toBe(true);
    expect((await snap.get(l)).byId.has("new")).toBe(true);
  });
});
