import { describe, expect, it } from "vitest";
import type { NasVolume } from "../../crds/nasvolume.js";
import type { AccountCalls } from "../../service/account.js";
import type { ListSnapshotView } from "../../service/list-snapshot.js";
import type { NasInstance } from "../../service/schemas/nas.js";
import type { ManagedCall } from "../managed/call.js";
import { NasExternalClient } from "./external.js";

const RUNNING: NasInstance = {
  id: "nas-1",
  status: "Running",
  quota: "100",
  used: "10",
  description: "[aidc-token:t]",
  mountPath: "/data/a",
};

/** A NAS client over a service whose NAS list snapshot is `view`. */
function clientWith(view: ListSnapshotView<NasInstance> | undefined) {
  const asked: number[] = [];
  const service = {
    nas: {
      listSnapshot: async (maxAgeMs: number) => {
        asked.push(maxAgeMs);
        return view;
      },
    },
  } as unknown as AccountCalls;
  return { client: new NasExternalClient(service), asked };
}

const call = (spec: Partial<NasVolume["spec"]> = {}) =>
  ({
    obj: {
      metadata: { name: "a", namespace: "ns", annotations: {} },
      spec: { productCode: "p", capacityGB: 100, mountPath: "/data/a", ...spec },
    },
    now: () => new Date("2026-01-01T00:00:00Z"),
  }) as unknown as ManagedCall<NasVolume>;

const viewOf = (...records: NasInstance[]): ListSnapshotView<NasInstance> => ({
  records: new Map(records.map((r) => [r.id, r])),
  fetchedAt: 1_000,
  complete: true,
});

describe("NasExternalClient.observeFromList", () => {
  it("answers from the listed record, asking for a snapshot younger than the poll interval", async () => {
    const { client, asked } = clientWith(viewOf(RUNNING));
    const listed = await client.observeFromList(call(), "nas-1", 30_000);
    expect(asked).toEqual([30_000]);
    expect(listed?.fetchedAt).toBe(1_000);
    expect(listed?.observation).toMatchObject({
      exists: true,
      upToDate: true,
      ready: { status: "True", reason: "Available" },
      remote: RUNNING,
    });
  });

  it("leaves the poll to the detail read when the list cannot answer for the object", async () => {
    const cases: [string, ListSnapshotView<NasInstance> | undefined, NasVolume["spec"]?][] = [
      ["no list (disabled, missing or failed)", undefined],
      ["the id is not listed", viewOf({ ...RUNNING, id: "nas-2" })],
      ["the record lacks the quota", viewOf({ ...RUNNING, quota: undefined })],
      ["the record lacks the status", viewOf({ ...RUNNING, status: undefined })],
      ["the record lacks the used amount", viewOf({ ...RUNNING, used: undefined })],
      ["the record lacks the description", viewOf({ ...RUNNING, description: undefined })],
      [
        "a change to make (capacity)",
        viewOf(RUNNING),
        { productCode: "p", capacityGB: 200, mountPath: "/data/a" } as NasVolume["spec"],
      ],
    ];
    for (const [what, view, spec] of cases) {
      const { client } = clientWith(view);
      expect(await client.observeFromList(call(spec), "nas-1", 30_000), what).toBeUndefined();
    }
  });
});
