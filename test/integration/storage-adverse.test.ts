/**
 * BlockVolume and FileSystem under an adverse service, against a real API server and
 * the emulator (as NasVolume is in service-recovery, create-outcome and hostile-service):
 * a burst of 403s (the key refused for a while, then accepted again), a create that
 * acts and then fails while the list does not show the new resource for a while, and a
 * redirect answered on their endpoints.
 */
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { blockVolumeController } from "../../src/controllers/blockvolume/controller.js";
import { fileSystemController } from "../../src/controllers/filesystem/controller.js";
import { blockVolumeCrd } from "../../src/crds/blockvolume.js";
import { fileSystemCrd } from "../../src/crds/filesystem.js";
import type { ResourceDescriptor } from "../../src/runtime/resource.js";
import { adminKubeConfig, createNamespace } from "../support/kube.js";
import { conditionOf, ObjectsOf } from "../support/managed.js";
import { startTestOperator, TEST_API_KEY, type TestOperator } from "../support/operator.js";

/** How long a new resource stays out of the list after its create (the visibility window). */
const LIST_DELAY_MS = 4_000;

interface StorageKind {
  kind: string;
  crd: ResourceDescriptor;
  spec: Record<string, unknown>;
  create: string;
  list: string;
  detail: string;
  /** The ids of the remote resources named `name`, from the admin state. */
  remoteIds(op: TestOperator, name: string): Promise<string[]>;
  /** The id the object's status shows. */
  idOf(status: Record<string, unknown> | undefined): unknown;
}

const KINDS: StorageKind[] = [
  {
    kind: "BlockVolume",
    crd: blockVolumeCrd,
    spec: { sizeGB: 5, volumeType: "ssd" },
    create: "createVolume",
    list: "listVolumes",
    detail: "getVolume",
    remoteIds: async (op, name) =>
      (await op.admin.state()).volumes.filter((v) => v.name === name).map((v) => String(v.id)),
    idOf: (s) => s?.volumeId,
  },
  {
    kind: "FileSystem",
    crd: fileSystemCrd,
    spec: { sizeGB: 10, mounts: [] },
    create: "createFileSystem",
    list: "listFileSystems",
    detail: "getFileSystem",
    remoteIds: async (op, name) =>
      (await op.admin.state()).fileSystems.filter((f) => f.name === name).map((f) => String(f.id)),
    idOf: (s) => s?.fileSystemId,
  },
];

let op: TestOperator;
const objects = new Map<string, ObjectsOf>();
/** The listener a redirect points at: whatever reaches it left the service's origin. */
let elsewhere: Server;
let elsewhereUrl = "";
const elsewhereRequests: IncomingMessage[] = [];

beforeAll(async () => {
  const namespace = await createNamespace(adminKubeConfig(), "storage-adverse");
  op = await startTestOperator({
    controllers: [
      // A window well past the list's delay: a create whose outcome is unknown is looked
      // up until it shows, never sent again.
      (deps) => blockVolumeController(deps, { visibilityGraceMs: 30_000 }),
      (deps) => fileSystemController(deps, { visibilityGraceMs: 30_000 }),
    ],
    namespaces: [namespace],
    emulatorOptions: { volumeTransitionMs: 200, fileStorageDelayMs: 200 },
    config: { holdBackoff: { baseMs: 1_000, maxMs: 2_000 } },
  });
  for (const k of KINDS) objects.set(k.kind, new ObjectsOf(op.kube, k.crd, namespace));
  elsewhere = createServer((req, res) => {
    elsewhereRequests.push(req);
    res.end('{"status":200,"message":"OK","data":{}}');
  });
  await new Promise<void>((resolve) => elsewhere.listen(0, "127.0.0.1", resolve));
  elsewhereUrl = `http://127.0.0.1:${(elsewhere.address() as AddressInfo).port}`;
}, 60_000);

afterEach(() => {
  op.emulator.faults.clear();
  op.emulator.state.behaviour.listVisibilityDelayMs = 0;
});

afterAll(async () => {
  await op?.stop();
  elsewhere?.closeAllConnections();
  await new Promise((resolve) => elsewhere?.close(resolve));
});

/** The create requests for `name` the service answered, with their HTTP and envelope status. */
const createsOf = async (k: StorageKind, name: string) =>
  (await op.admin.requests({ endpoint: k.create })).filter(
    (r) => (r.body as { name?: string } | undefined)?.name === name,
  );

describe.each(KINDS)("$kind under an adverse service", (k) => {
  const objs = () => objects.get(k.kind) as ObjectsOf;
  const name = (what: string) => `${k.kind.toLowerCase()}-${what}`;

  it("says ApiKeyRefused through a burst of 403s, then recovers without a restart, creating nothing twice", async () => {
    const before = name("before");
    const during = name("during");
    await objs().create(before, k.spec);
    await objs().waitForCondition(before, "Ready", "True");

    op.emulator.faults.set([{ kind: "error", status: 403, message: "Forbidden" }]);
    await objs().create(during, k.spec);
    // The settled object no longer claims Ready; the new one says why it is not.
    const held = await objs().waitForCondition(before, "Ready", "Unknown", "ApiKeyRefused");
    expect(conditionOf(held, "Synced")).toMatchObject({ status: "False", reason: "ApiKeyRefused" });
    const fresh = await objs().waitForCondition(during, "Ready", "False", "ApiKeyRefused");
    expect(conditionOf(fresh, "Ready")?.message).toMatch(/API key/);
    expect(JSON.stringify(fresh)).not.toContain(TEST_API_KEY);
    expect(await k.remoteIds(op, during)).toEqual([]);

    op.emulator.faults.clear();
    const cleared = Date.now();
    const back = await objs().waitForCondition(before, "Ready", "True", undefined, 10_000);
    const made = await objs().waitForCondition(during, "Ready", "True", undefined, 10_000);
    expect(conditionOf(back, "Synced")?.status).toBe("True");
    expect(conditionOf(made, "Synced")?.status).toBe("True");
    // The hold backoff (2 s at most) and a reconcile, not a restart.
    expect(Date.now() - cleared).toBeLessThan(8_000);
    expect(await k.remoteIds(op, before)).toEqual([k.idOf(back.status as Record<string, unknown>)]);
    expect(await k.remoteIds(op, during)).toEqual([k.idOf(made.status as Record<string, unknown>)]);
    // Every create of the burst was refused before it acted; one went through after it.
    expect((await createsOf(k, during)).filter((r) => r.status === 200)).toHaveLength(1);
  }, 60_000);

  it("makes exactly one resource when a create acts, fails, and the list shows it only later", async () => {
    const late = name("late");
    op.emulator.state.behaviour.listVisibilityDelayMs = LIST_DELAY_MS;
    op.emulator.faults.set([
      { kind: "error", endpoint: k.create, acting: true, httpStatus: 500, times: 1 },
    ]);
    const began = Date.now();
    await objs().create(late, k.spec);
    const ready = await objs().waitForCondition(late, "Ready", "True", undefined, 30_000);
    // It looked the resource up until the list showed it, and never created it again.
    expect(Date.now() - began).toBeGreaterThanOrEqual(LIST_DELAY_MS - 500);
    expect(await k.remoteIds(op, late)).toEqual([k.idOf(ready.status as Record<string, unknown>)]);
    const creates = await createsOf(k, late);
    expect(creates.map((r) => r.httpStatus)).toEqual([500]);
    expect((await op.admin.requests({ endpoint: k.list })).length).toBeGreaterThan(1);
    await objs().waitForEvents(late, ["Recovered"]);
  }, 60_000);

  it("follows no redirect on its create or its reads: ServiceRedirected, nothing sent elsewhere, nothing created, then recovers", async () => {
    const moved = name("moved");
    const location = `${elsewhereUrl}/steal`;
    op.emulator.faults.set([{ kind: "redirect", status: 307, location, endpoint: k.create }]);
    const began = Date.now();
    await objs().create(moved, k.spec);
    const refused = await objs().waitForCondition(moved, "Synced", "False", "ServiceRedirected");
    const message = conditionOf(refused, "Synced")?.message ?? "";
    expect(message).toContain(location);
    expect(message).toContain("service.baseUrl");
    await new Promise((r) => setTimeout(r, 1_500));
    // A redirect is a refusal (the create did not act): tried again on the slow hold
    // backoff (1 s, then 2 s here), and again when the condition's write met a cache
    // behind the reconcile's own writes (on a loaded machine, up to once per try: 5 in
    // 2.5 s were seen in CI); never in a spin (it was 7 creates in 200 ms, and on,
    // while the echoes of those writes re-ran the refused create), never followed.
    const redirected = await createsOf(k, moved);
    expect(redirected.every((r) => r.fault === "redirect" && !r.acted)).toBe(true);
    expect(redirected.length).toBeGreaterThanOrEqual(1);
    const seconds = Math.floor((Date.now() - began) / 1_000);
    expect(redirected.length).toBeLessThanOrEqual(2 * (2 + seconds));
    expect(await k.remoteIds(op, moved)).toEqual([]);

    // Once the service answers where it is asked, the object gets its one resource,
    // without a change of the object.
    op.emulator.faults.clear();
    const made = await objs().waitForCondition(moved, "Ready", "True", undefined, 15_000);
    const id = k.idOf(made.status as Record<string, unknown>);
    expect(await k.remoteIds(op, moved)).toEqual([id]);
    expect((await createsOf(k, moved)).filter((r) => r.status === 200)).toHaveLength(1);

    // The reads of a settled object are not followed either, and come back by themselves.
    op.emulator.faults.set([
      { kind: "redirect", status: 302, location, endpoint: k.detail },
      { kind: "redirect", status: 308, location, endpoint: k.list },
    ]);
    await objs().waitForCondition(moved, "Synced", "False", "ServiceRedirected", 15_000);
    op.emulator.faults.clear();
    await objs().waitForCondition(moved, "Synced", "True", undefined, 15_000);
    expect(await k.remoteIds(op, moved)).toEqual([id]);
    expect(elsewhereRequests).toHaveLength(0);
  }, 60_000);
});
