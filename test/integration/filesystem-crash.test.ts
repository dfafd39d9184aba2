/**
 * Crash safety of a FileSystem's mounts: the operator killed right after the service
 * made a mount (its answer never recorded), then the object deleted under
 * `deletionPolicy: Delete` while no operator runs. The next operator must take the
 * mount on the spec's instance for the object's own (as the live path does), remove it
 * and delete the file system, instead of holding the delete for a mount "it did not
 * make". And a mount an earlier call made after the operator read the file system (a
 * process killed with the call under way): the service refuses the second mount on the
 * instance, and the operator reads again and takes the mount for the object's.
 */
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { fileSystemController } from "../../src/controllers/filesystem/controller.js";
import type { ControllerFactory } from "../../src/controllers/index.js";
import { fileSystemCrd } from "../../src/crds/filesystem.js";
import { type RunningEmulator, startEmulator } from "../../src/emulator/server.js";
import { adminKubeConfig, createNamespace } from "../support/kube.js";
import { ObjectsOf } from "../support/managed.js";
import {
  diesAfter,
  holdsFirst,
  startTestOperator,
  TEST_API_KEY,
  type TestOperator,
} from "../support/operator.js";

const fast: ControllerFactory = (deps) => fileSystemController(deps, { visibilityGraceMs: 1_000 });

const started: TestOperator[] = [];
const emulators: RunningEmulator[] = [];
let ns: string;

beforeAll(async () => {
  ns = await createNamespace(adminKubeConfig(), "fs-crash");
});

afterEach(async () => {
  for (const op of started.splice(0)) await op.stop();
  for (const e of emulators.splice(0)) await e.stop();
});

describe("a FileSystem deleted after the operator died right after a mount", () => {
  it("removes the mount on the spec's instance and deletes the file system", async () => {
    const emulator = await startEmulator({ apiKey: TEST_API_KEY, fileStorageDelayMs: 0 });
    emulators.push(emulator);
    let killed = () => {};
    const mounted = new Promise<void>((resolve) => {
      killed = resolve;
    });
    const first = await startTestOperator({
      controllers: [fast],
      namespaces: [ns],
      emulator,
      shutdownTimeoutMs: 300,
      makeService: diesAfter("createFileSystemMount", () => killed()),
    });
    started.push(first);
    const objects = new ObjectsOf(first.kube, fileSystemCrd, ns);
    await objects.create("shared", {
      sizeGB: 10,
      mounts: [{ name: "a", target: { instanceId: "cci-0003" } }],
      deletionPolicy: "Delete",
    });
    await mounted;
    await first.stop();
    const [made] = [...emulator.state.fileSystems.byId.values()].filter((f) => f.name === "shared");
    expect([...(made?.mounts.values() ?? [])].map((m) => m.instanceId)).toEqual(["cci-0003"]);
    // No status recorded the mount: the object is deleted before any operator sees it.
    const status = (await objects.get("shared"))?.status as { mounts?: unknown[] } | undefined;
    expect(status?.mounts ?? []).toEqual([]);
    await objects.delete("shared");

    const second = await startTestOperator({ controllers: [fast], namespaces: [ns], emulator });
    started.push(second);
    await objects.waitForGone("shared");
    expect(emulator.state.fileSystems.byId.has(made?.id ?? "")).toBe(false);
    const deletes = emulator.requestLog
      .read({ method: "DELETE" })
      .map((e) => `${e.endpoint} ${e.status}`);
    expect(deletes).toEqual(["deleteFileSystemMount 200", "deleteFileSystem 200"]);
  }, 60_000);
});

describe("a FileSystem whose mount an earlier call made after the operator's read", () => {
  it("reads again after the service refuses the second mount, and is Ready with the one mount", async () => {
    const emulator = await startEmulator({ apiKey: TEST_API_KEY, fileStorageDelayMs: 0 });
    emulators.push(emulator);
    const hold = holdsFirst("createFileSystemMount");
    const op = await startTestOperator({
      controllers: [fast],
      namespaces: [ns],
      emulator,
      makeService: hold.makeService,
    });
    started.push(op);
    const objects = new ObjectsOf(op.kube, fileSystemCrd, ns);
    await objects.create("late", {
      sizeGB: 10,
      mounts: [{ name: "a", target: { instanceId: "cci-0003" } }],
    });
    await hold.held;
    // The earlier call lands while this one is under way: the instance has its mount.
    const fs = [...emulator.state.fileSystems.byId.values()].find((f) => f.name === "late");
    if (!fs) throw new Error("the file system was not made");
    emulator.state.fileSystems.addMount(
      fs,
      {
        id: "mnt-earlier",
        instanceId: "cci-0003",
        address: "10.30.0.9:/x",
        status: "mounted",
        createdAt: 0,
      },
      0,
    );
    hold.release();
    const ready = await objects.waitForCondition("late", "Ready", "True");
    expect(ready?.status).toMatchObject({
      mounts: [{ name: "a", state: "Mounted", mountId: "mnt-earlier", instanceId: "cci-0003" }],
    });
    const refused = emulator.requestLog.read({ endpoint: "createFileSystemMount" });
    expect(refused.map((e) => e.status)).toEqual([409]);
    expect([...fs.mounts.keys()]).toEqual(["mnt-earlier"]);
  }, 60_000);
});
