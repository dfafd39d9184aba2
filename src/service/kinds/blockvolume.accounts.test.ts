/**
 * The block volume list snapshot belongs to its caller: each account has its own
 * client (a ServiceConnection's, connected once per connection), so a service of one
 * account never answers another account's walk, and a change made through one account
 * drops only that account's walk.
 */

import { describe, expect, it } from "vitest";
import type { z } from "zod";
import type { OperationArgs, OperationCaller } from "../operation-caller.js";
import { BlockVolumeService } from "./blockvolume.js";

/** The caller of one account, recording the list walks it answers. */
function accountCaller(volumes: string[], listCalls: string[], account: string): OperationCaller {
  return {
    async request<T>(name: string, _args: OperationArgs, schema: z.ZodType<T>): Promise<T> {
      if (name === "listVolumes") {
        listCalls.push(account);
        const records = volumes.map((id) => ({ id, name: id, status: "available", sizeGB: 10 }));
        return schema.parse({ records, totalRows: records.length });
      }
      return schema.parse({});
    },
    checkedBody: (_name, _schema, body) => body,
    operationState: () => "present",
    requireOperations: async () => undefined,
  };
}

describe("the block volume list snapshot", () => {
  it("walks each account's list for that account's objects, never another's", async () => {
    const listCalls: string[] = [];
    const a = new BlockVolumeService(accountCaller(["vol-a1", "vol-a2"], listCalls, "a"));
    const b = new BlockVolumeService(accountCaller(["vol-b1"], listCalls, "b"));

    const ofA = await a.listSnapshot(60_000);
    const ofB = await b.listSnapshot(60_000);
    const ofAAgain = await a.listSnapshot(60_000);

    expect([...(ofA?.records.keys() ?? [])].sort()).toEqual(["vol-a1", "vol-a2"]);
    expect([...(ofB?.records.keys() ?? [])]).toEqual(["vol-b1"]);
    expect(ofAAgain).toBe(ofA);
    expect(listCalls).toEqual(["a", "b"]);
  });

  it("drops only the changing account's walk after an attach", async () => {
    const listCalls: string[] = [];
    const a = new BlockVolumeService(accountCaller(["vol-a1"], listCalls, "a"));
    const b = new BlockVolumeService(accountCaller(["vol-b1"], listCalls, "b"));
    await a.listSnapshot(60_000);
    await b.listSnapshot(60_000);

    await a.attachVolume("vol-a1", "cci-0001");
    await a.listSnapshot(60_000);
    await b.listSnapshot(60_000);

    expect(listCalls).toEqual(["a", "b", "a"]);
  });
});
