/**
 * Contract: block volumes (the kind's operations through the service client) against
 * the emulator, with the assumed shapes
 * (docs/service-assumptions.md §11b): create, attach, detach and delete through their
 * transitional states, the detail and the list, the lookup by client token, the
 * refusals (attach twice, detach a detached volume, delete an attached one), and the
 * tolerant reading of other spellings of the record.
 */
import { describe, expect, it } from "vitest";
import { emulatorPerFile, failure } from "../../../test/support/service-contract.js";
import type { EmulatedService } from "../../emulator/harness.js";
import {
  ServiceInvalidRequestError,
  ServiceNotFoundError,
  ServiceRefusedError,
} from "../errors.js";
import { blockVolumeSchema } from "../schemas/block-volumes.js";
import { withClientTokenMarker } from "../schemas/create.js";
import { BlockVolumeService } from "./blockvolume.js";

let svc: EmulatedService;
let client: BlockVolumeService;
const TRANSITION = 1000;

emulatorPerFile({ manualTime: true, emulator: { volumeTransitionMs: TRANSITION } }, (started) => {
  svc = started;
  client = new BlockVolumeService(svc.client);
});

const later = () => svc.clock?.advance(TRANSITION);

async function availableVolume(name = "scratch"): Promise<string> {
  const id = await client.createVolume({ name, sizeGB: 100, volumeType: "ssd" });
  later();
  return id;
}

describe("block volumes", () => {
  it("creates a volume that is creating, then available, with its fields", async () => {
    const id = await client.createVolume({
      name: "scratch",
      sizeGB: 100,
      volumeType: "ssd",
      description: "for tmp",
    });
    expect(id).toMatch(/^vol-/);
    expect(await client.getVolume(id)).toMatchObject({ status: "creating" });
    later();
    const v = await client.getVolume(id);
    expect(v).toMatchObject({
      id,
      name: "scratch",
      sizeGB: 100,
      volumeType: "ssd",
      description: "for tmp",
      status: "available",
    });
    expect(v.instanceId).toBeUndefined();
    expect(v.createdTime).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  });

  it("attaches, detaches and deletes a volume through the transitional states", async () => {
    const id = await availableVolume();
    await client.attachVolume(id, "cci-0001");
    expect(await client.getVolume(id)).toMatchObject({
      status: "attaching",
      instanceId: "cci-0001",
    });
    later();
    expect(await client.getVolume(id)).toMatchObject({ status: "in-use", instanceId: "cci-0001" });
    await client.detachVolume(id, "cci-0001");
    expect(await client.getVolume(id)).toMatchObject({ status: "detaching" });
    later();
    const detached = await client.getVolume(id);
    expect(detached.status).toBe("available");
    expect(detached.instanceId).toBeUndefined();
    await client.deleteVolume(id);
    expect(await client.getVolume(id)).toMatchObject({ status: "deleting" });
    later();
    expect(await failure(client.getVolume(id))).toBeInstanceOf(ServiceNotFoundError);
    expect(await failure(client.deleteVolume(id))).toBeInstanceOf(ServiceNotFoundError);
  });

  it("refuses a second attach, a detach of a detached volume and the delete of an attached one", async () => {
    const id = await availableVolume();
    const detach = await failure(client.detachVolume(id));
    expect(detach).toBeInstanceOf(ServiceRefusedError);
    expect(detach).toMatchObject({ code: 409, message: expect.stringContaining("not attached") });
    await client.attachVolume(id, "cci-0001");
    expect(await failure(client.attachVolume(id, "cci-0002"))).toMatchObject({ code: 409 });
    expect(await failure(client.deleteVolume(id))).toMatchObject({ code: 409 });
    later();
    expect(await failure(client.attachVolume(id, "cci-0001"))).toMatchObject({
      code: 409,
      message: expect.stringContaining("already attached to cci-0001"),
    });
    expect(await failure(client.deleteVolume(id))).toMatchObject({
      code: 409,
      message: expect.stringContaining("detach it first"),
    });
    expect(await failure(client.detachVolume(id, "cci-0002"))).toMatchObject({
      code: 409,
      message: expect.stringContaining("attached to cci-0001, not to cci-0002"),
    });
    await client.detachVolume(id);
    expect(await failure(client.deleteVolume(id))).toMatchObject({ code: 409 });
  });

  it("refuses an attach to an unknown instance as a bad request, not as a missing volume", async () => {
    const id = await availableVolume();
    const err = await failure(client.attachVolume(id, "cci-9999"));
    expect(err).toBeInstanceOf(ServiceRefusedError);
    expect(err).not.toBeInstanceOf(ServiceNotFoundError);
    expect(err).toMatchObject({ code: 400 });
    expect(await failure(client.attachVolume("vol-404", "cci-0001"))).toBeInstanceOf(
      ServiceNotFoundError,
    );
  });

  it("refuses an invalid create before sending it", async () => {
    const before = svc.emulator.requestLog.lastSeq();
    const err = await failure(client.createVolume({ name: "x", sizeGB: 0, volumeType: "ssd" }));
    expect(err).toBeInstanceOf(ServiceInvalidRequestError);
    expect(svc.emulator.requestLog.lastSeq()).toBe(before);
  });

  it("lists volumes page by page, filtered, and finds one by its client token", async () => {
    for (let i = 0; i < 12; i++) await availableVolume(`bulk-${i}`);
    const marked = await client.createVolume({
      name: "bulk-marked",
      sizeGB: 5,
      volumeType: "hdd",
      description: withClientTokenMarker("mine", "tok-1"),
    });
    const ids = await client.listVolumeIds();
    expect(ids?.complete).toBe(true);
    expect(ids?.ids.size).toBe(13);
    expect(await client.findVolumeIdsByClientToken("tok-1", "bulk-marked")).toEqual([marked]);
    expect(await client.findVolumeIdsByClientToken("tok-2")).toEqual([]);
    later();
    await client.attachVolume(marked, "cci-0002");
    const page = await client.listVolumes({ instanceId: "cci-0002" });
    expect(page.records.map((v) => v.id)).toEqual([marked]);
  });

  it("proves a token absent only from a complete walk whose records all carry a description", async () => {
    await client.createVolume({
      name: "marked",
      sizeGB: 5,
      volumeType: "hdd",
      description: withClientTokenMarker("mine", "tok-3"),
    });
    expect(await client.provesVolumeTokenAbsent("tok-3")).toBe(false);
    expect(await client.provesVolumeTokenAbsent("tok-never-sent")).toBe(true);
    svc.emulator.state.behaviour.listsOmitDescription = true;
    try {
      expect(await client.provesVolumeTokenAbsent("tok-never-sent")).toBe(false);
      expect(await client.findVolumeIdsByClientToken("tok-3")).toEqual([]);
    } finally {
      svc.emulator.state.behaviour.listsOmitDescription = false;
    }
  });

  it("shows a volume attached elsewhere through the admin API, as someone else would", async () => {
    const id = await availableVolume();
    await svc.admin.setVolumeState(id, { status: "in-use", instanceId: "cci-0002" });
    expect(await client.getVolume(id)).toMatchObject({ status: "in-use", instanceId: "cci-0002" });
    await svc.admin.setVolumeState(id, { status: "available", instanceId: null });
    expect((await client.getVolume(id)).instanceId).toBeUndefined();
  });

  it("answers undefined for the token lookup when the list is disabled", async () => {
    const c = new BlockVolumeService(svc.newClient({ endpoints: { listVolumes: null } }));
    expect(await c.findVolumeIdsByClientToken("tok")).toBeUndefined();
    expect(await c.provesVolumeTokenAbsent("tok")).toBeUndefined();
    expect(await c.listVolumeIds()).toBeUndefined();
  });
});

describe("the volume record", () => {
  it.each([
    [
      "the assumed shape",
      { id: "v1", sizeGB: 10, volumeType: "ssd", status: "in-use", instanceId: "cci-1" },
      { sizeGB: 10, volumeType: "ssd", status: "in-use", instanceId: "cci-1" },
    ],
    [
      "other names and a number as text",
      { id: 7, size: "20", type: "hdd", state: "IN_USE", attachedTo: "cci-2" },
      { id: "7", sizeGB: 20, volumeType: "hdd", status: "in-use", instanceId: "cci-2" },
    ],
    [
      "an attachments list",
      { id: "v3", status: "Attached", attachments: [{ serverId: "cci-3" }] },
      { status: "in-use", instanceId: "cci-3" },
    ],
    [
      "an empty instance id as none",
      { id: "v4", status: "AVAILABLE", instanceId: "" },
      { status: "available" },
    ],
    ["an unknown state as sent", { id: "v5", status: "Resizing" }, { status: "Resizing" }],
  ])("reads %s", (_name, wire, expected) => {
    const v = blockVolumeSchema.parse(wire);
    expect(v).toMatchObject(expected);
    if (!("instanceId" in expected)) expect(v.instanceId).toBeUndefined();
  });
});
