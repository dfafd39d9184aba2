/**
 * Contract: file systems and their mounts, client against the emulator, in the shapes
 * docs/service-assumptions.md assumes: create (found again by its client token), the
 * detail with its mounts, the states over time, the refusals, and the deletes (also
 * missing, as a service without them answers).
 */
import { beforeEach, describe, expect, it } from "vitest";
import { emulatorPerFile, failure } from "../../../test/support/service-contract.js";
import type { EmulatedService } from "../../emulator/harness.js";
import {
  ServiceInvalidRequestError,
  ServiceNotFoundError,
  ServiceOperationMissingError,
  ServiceRefusedError,
} from "../errors.js";
import { withClientTokenMarker } from "../schemas/create.js";
import { fileSystemSchema, storageStateClass } from "../schemas/file-systems.js";
import { FileSystemOperations } from "./filesystem.js";

let svc: EmulatedService;
let client: FileSystemOperations;
const DELAY = 500;

emulatorPerFile({ manualTime: true, emulator: { fileStorageDelayMs: DELAY } }, (started) => {
  svc = started;
  client = new FileSystemOperations(svc.client);
});
beforeEach(() => {
  svc.emulator.state.behaviour.missingOperations = [];
});

async function availableFileSystem(name = "shared", token = "tok-1"): Promise<string> {
  const { id } = await client.create({
    name,
    sizeGB: 100,
    description: withClientTokenMarker("team files", token),
  });
  svc.clock?.advance(DELAY);
  return id as string;
}

describe("file systems", () => {
  it("creates one (creating, then available) and finds it again by its client token", async () => {
    const { id } = await client.create({
      name: "shared",
      sizeGB: 100,
      type: "performance",
      protocol: "NFS",
      description: withClientTokenMarker("team files", "tok-7"),
    });
    expect(id).toMatch(/^fs-/);
    expect(await client.get(id as string)).toMatchObject({
      id,
      name: "shared",
      sizeGB: 100,
      type: "performance",
      protocol: "NFS",
      status: "creating",
      mounts: [],
    });
    svc.clock?.advance(DELAY);
    expect((await client.get(id as string)).status).toBe("available");
    expect(await client.findIdsByClientToken("tok-7", "shared")).toEqual([id]);
    expect(await client.findIdsByClientToken("tok-8")).toEqual([]);
    expect((await client.listIds())?.ids).toEqual(new Set([id]));
  });

  it("proves a token absent only from a complete walk whose records all carry a description", async () => {
    await availableFileSystem("shared", "tok-3");
    expect(await client.provesTokenAbsent("tok-3")).toBe(false);
    expect(await client.provesTokenAbsent("tok-never-sent")).toBe(true);
    svc.emulator.state.behaviour.listsOmitDescription = true;
    try {
      expect(await client.provesTokenAbsent("tok-never-sent")).toBe(false);
      expect(await client.findIdsByClientToken("tok-3")).toEqual([]);
    } finally {
      svc.emulator.state.behaviour.listsOmitDescription = false;
    }
  });

  it("refuses a create without the size, before sending it", async () => {
    const err = await failure(client.create({ name: "x" } as never));
    expect(err).toBeInstanceOf(ServiceInvalidRequestError);
    expect(svc.emulator.requestLog.read()).toHaveLength(0);
  });

  it("mounts it on an instance, shows the mount in the detail, removes the mount, then deletes it", async () => {
    const fsId = await availableFileSystem();
    const { id: mountId } = await client.mount(fsId, {
      instanceId: "cci-0001",
      mountPath: "/shared",
    });
    expect(mountId).toMatch(/^mnt-/);
    svc.clock?.advance(DELAY);
    const fs = await client.get(fsId);
    expect(fs.mounts).toEqual([
      {
        id: mountId,
        instanceId: "cci-0001",
        mountPath: "/shared",
        status: "mounted",
        address: expect.stringMatching(new RegExp(`:/${fsId}$`)),
      },
    ]);
    // The service refuses to delete a file system that still has mounts.
    expect(await failure(client.delete(fsId))).toMatchObject({ code: 409 });
    await client.unmount(fsId, mountId as string);
    expect((await client.get(fsId)).mounts?.[0]?.status).toBe("deleting");
    svc.clock?.advance(DELAY);
    expect((await client.get(fsId)).mounts).toEqual([]);
    await client.delete(fsId);
    expect((await client.get(fsId)).status).toBe("deleting");
    svc.clock?.advance(DELAY);
    expect(await failure(client.get(fsId))).toBeInstanceOf(ServiceNotFoundError);
  });

  it("refuses a mount on the same instance twice, on an unknown instance, and before available", async () => {
    const { id } = await client.create({ name: "early", sizeGB: 10 });
    const early = await failure(client.mount(id as string, { instanceId: "cci-0001" }));
    expect(early).toMatchObject({ code: 409 });
    svc.clock?.advance(DELAY);
    await client.mount(id as string, { instanceId: "cci-0001" });
    const twice = await failure(client.mount(id as string, { instanceId: "cci-0001" }));
    expect(twice).toBeInstanceOf(ServiceRefusedError);
    expect(twice).toMatchObject({ code: 409 });
    const unknown = await failure(client.mount(id as string, { instanceId: "cci-9" }));
    expect(unknown).toMatchObject({ code: 400 });
    expect(await failure(client.mount("fs-404", { instanceId: "cci-0001" }))).toBeInstanceOf(
      ServiceNotFoundError,
    );
    expect((await client.get(id as string)).mounts).toHaveLength(1);
  });

  it("answers a bare 404 for the deletes where the service has none", async () => {
    const fsId = await availableFileSystem();
    const { id: mountId } = await client.mount(fsId, { instanceId: "cci-0002" });
    svc.emulator.state.behaviour.missingOperations = ["deleteFileSystem", "deleteFileSystemMount"];
    expect(await failure(client.unmount(fsId, mountId as string))).toBeInstanceOf(
      ServiceOperationMissingError,
    );
    expect(await failure(client.delete(fsId))).toBeInstanceOf(ServiceOperationMissingError);
    expect((await client.get(fsId)).mounts).toHaveLength(1);
  });
});

describe("tolerant reading of file system answers", () => {
  it("reads other spellings of the fields, and null as absent", () => {
    const fs = fileSystemSchema.parse({
      fileSystemId: 42,
      size: "100",
      state: "Available",
      storageType: "standard",
      createTime: "2025-01-02 03:04:05",
      description: null,
      mountTargets: [
        { mountId: "m1", targetId: "cci-0001", mountAddress: "10.0.0.1:/x", state: "MOUNTED" },
      ],
    });
    expect(fs).toEqual({
      id: "42",
      sizeGB: 100,
      status: "Available",
      type: "standard",
      createdTime: "2025-01-02T03:04:05Z",
      mounts: [{ id: "m1", instanceId: "cci-0001", address: "10.0.0.1:/x", status: "MOUNTED" }],
    });
  });

  it("classes state words ignoring case and separators", () => {
    expect(storageStateClass("IN_USE")).toBe("Ready");
    expect(storageStateClass("Mounted")).toBe("Ready");
    expect(storageStateClass("creating")).toBe("Creating");
    expect(storageStateClass("Deleting")).toBe("Deleting");
    expect(storageStateClass("mount-failed")).toBe("Failed");
    expect(storageStateClass("resizing")).toBe("Unknown");
    expect(storageStateClass(undefined)).toBe("Unknown");
  });
});
