import { describe, expect, it } from "vitest";
import type { z } from "zod";
import type { BlockVolume as BlockVolumeObject } from "../../crds/blockvolume.js";
import type { BlockVolume } from "../../service/index.js";
import { volumeListSnapshot } from "../../service/kinds/blockvolume.js";
import type { OperationArgs, OperationCaller } from "../../service/operation-caller.js";
import { ATTACHMENT_ANNOTATION } from "./decisions.js";
import { BlockVolumeExternalClient, type VolumeCall } from "./external.js";

const ATTACHED: BlockVolume = {
  id: "vol-1",
  status: "in-use",
  instanceId: "i-1",
  sizeGB: 10,
  volumeType: "ssd",
  description: "[aidc-token:t]",
};

/**
 * A volume client over a service whose volume list holds `records` (undefined: the
 * list is disabled); `sent` has the operations called.
 */
function clientWith(records: BlockVolume[] | undefined, now = () => 1_000) {
  const sent: string[] = [];
  const service: OperationCaller = {
    operationState: (name) =>
      name === "listVolumes" && records === undefined ? "disabled" : "unknown",
    requireOperations: async () => undefined,
    checkedBody: (_n: string, _s: unknown, body: unknown) => body,
    request: async <T>(name: string, _args: OperationArgs, schema: z.ZodType<T>) => {
      sent.push(name);
      if (name === "listVolumes") {
        return schema.parse({ records, pageNo: 1, pageSize: 100, totalRows: records?.length });
      }
      if (name === "attachVolume") return schema.parse({});
      throw new Error(`unexpected ${name}`);
    },
  };
  return { client: new BlockVolumeExternalClient(service, volumeListSnapshot(now)), sent };
}

const call = (attachTo: string | undefined, ours: string | undefined = attachTo) =>
  ({
    obj: {
      metadata: {
        name: "a",
        namespace: "ns",
        annotations: ours ? { [ATTACHMENT_ANNOTATION]: ours } : {},
      },
      spec: {
        sizeGB: 10,
        volumeType: "ssd",
        ...(attachTo ? { attachTo: { instanceId: attachTo } } : {}),
      },
    } as unknown as BlockVolumeObject,
    refs: { instanceId: attachTo },
    now: () => new Date(1_000),
    annotate: async () => undefined,
  }) as unknown as VolumeCall;

describe("BlockVolumeExternalClient.observeFromList", () => {
  it("answers every settled volume from one walk of the list per asked age", async () => {
    const { client, sent } = clientWith([ATTACHED, { ...ATTACHED, id: "vol-2" }]);
    const first = await client.observeFromList(call("i-1"), "vol-1", 30_000);
    const second = await client.observeFromList(call("i-1"), "vol-2", 30_000);
    expect(sent).toEqual(["listVolumes"]);
    expect(first?.fetchedAt).toBe(1_000);
    expect(first?.observation).toMatchObject({
      exists: true,
      upToDate: true,
      ready: { status: "True", reason: "Attached" },
      remote: ATTACHED,
    });
    expect(second?.observation.remote.id).toBe("vol-2");
  });

  it("walks the list anew after an attach or detach the operator sent", async () => {
    const { client, sent } = clientWith([ATTACHED]);
    await client.observeFromList(call("i-1"), "vol-1", 30_000);
    await client.update(call("i-1", undefined), "vol-1", {
      ...ATTACHED,
      status: "available",
      instanceId: undefined,
    });
    await client.observeFromList(call("i-1"), "vol-1", 30_000);
    expect(sent).toEqual(["listVolumes", "attachVolume", "listVolumes"]);
  });

  it("leaves the poll to the detail read when the list cannot answer for the volume", async () => {
    const cases: [string, BlockVolume[] | undefined, VolumeCall][] = [
      ["the list is disabled", undefined, call("i-1")],
      ["the id is not listed", [{ ...ATTACHED, id: "vol-2" }], call("i-1")],
      ["the record lacks the state", [{ ...ATTACHED, status: undefined }], call("i-1")],
      ["the record lacks the size", [{ ...ATTACHED, sizeGB: undefined }], call("i-1")],
      ["the record lacks the description", [{ ...ATTACHED, description: undefined }], call("i-1")],
      [
        "detached outside (an attach to make)",
        [{ ...ATTACHED, status: "available", instanceId: undefined }],
        call("i-1"),
      ],
      ["attached by someone else", [{ ...ATTACHED, instanceId: "i-3" }], call("i-1")],
      ["a transition under way", [{ ...ATTACHED, status: "detaching" }], call("i-1")],
    ];
    for (const [what, records, c] of cases) {
      const { client, sent } = clientWith(records);
      expect(await client.observeFromList(c, "vol-1", 30_000), what).toBeUndefined();
      expect(sent, what).toEqual(records === undefined ? [] : ["listVolumes"]);
    }
  });
});
