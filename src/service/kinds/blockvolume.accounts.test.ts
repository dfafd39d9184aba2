/**
 * The block volume list snapshot is kept per account: a caller routed per object
 * (service connections) that reads the snapshot for an object of account B right after
 * one of account A never gets A's walk, and a change made through one account drops
 * only that account's walk.
 */

import { describe, expect, it } from "vitest";
import type { z } from "zod";
import type { OperationArgs, OperationCaller } from "../operation-caller.js";
import { BlockVolumeService } from "./blockvolume.js";

/** A caller that answers the volume list of whichever account it is routed to now. */
function routedCaller(lists: Record<string, string[]>) {
  const scopes: Record<string, object> = {};
  for (const account of Object.keys(lists)) scopes[account] = {};
  const state = { account: Object.keys(lists)[0] as string, listCalls: [] as string[] };
  const caller: OperationCaller = {
    get accountScope() {
      return scopes[state.account];
    },
    async request<T>(name: string, _args: OperationArgs, schema: z.ZodType<T>): Promise<T> {
      if (name === "listVolumes") {
        state.listCalls.push(state.account);
        const records = (lists[state.account] ?? []).map((id) => ({
          id,
          name: id,
          status: "available",
          sizeGB: 10,
        }));
        return schema.parse({ records, totalRows: records.length });
      }
      return schema.parse({});
    },
    checkedBody: (_name, _schema, body) => body,
    operationState: () => "present",
    requireOperations: async () => undefined,
  };
  return { caller, state };
}

describe("the block volume list snapshot", () => {
  it("walks each account's list for that account's objects, never another's", async () => {
    const { caller, state } = routedCaller({ a: ["vol-a1", "vol-a2"], b: ["vol-b1"] });
    const volumes = new BlockVolumeService(caller);

    const ofA = await volumes.listSnapshot(60_000);
    state.account = "b";
    const ofB = await volumes.listSnapshot(60_000);
    state.account = "a";
    const ofAAgain = await volumes.listSnapshot(60_000);

    expect([...(ofA?.records.keys() ?? [])].sort()).toEqual(["vol-a1", "vol-a2"]);
    expect([...(ofB?.records.keys() ?? [])]).toEqual(["vol-b1"]);
    expect(ofAAgain).toBe(ofA);
    expect(state.listCalls).toEqual(["a", "b"]);
  });

  it("drops only the changing account's walk after an attach", async () => {
    const { caller, state } = routedCaller({ a: ["vol-a1"], b: ["vol-b1"] });
    const volumes = new BlockVolumeService(caller);
    await volumes.listSnapshot(60_000);
    state.account = "b";
    await volumes.listSnapshot(60_000);

    state.account = "a";
    await volumes.attachVolume("vol-a1", "cci-0001");
    await volumes.listSnapshot(60_000);
    state.account = "b";
    await volumes.listSnapshot(60_000);

    expect(state.listCalls).toEqual(["a", "b", "a"]);
  });
});
