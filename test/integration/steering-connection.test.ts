/**
 * Steering a ServiceConnection, a kind outside the managed loop, on the real API server
 * against the emulator: aidc.io/paused (no Ready check, no finalizer change, only the
 * managed loop's ReconcilePaused condition; a deletion held by objects waits until
 * resumed) and aidc.io/reconcile-requested-at (the Ready check at once, echoed in
 * status.lastHandledReconcileAt). Its checks run once a minute here, so every check
 * the test sees was asked for.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { serviceConnectionController } from "../../src/controllers/connections/controller.js";
import { nasVolumeController } from "../../src/controllers/nasvolume/controller.js";
import { nasVolumeCrd } from "../../src/crds/nasvolume.js";
import { serviceConnectionCrd } from "../../src/crds/serviceconnection.js";
import { EmulatorAdmin } from "../../src/emulator/admin-client.js";
import { type RunningEmulator, startEmulator } from "../../src/emulator/server.js";
import type { KubeObject } from "../../src/runtime/resource.js";
import { adminKubeConfig, createNamespace } from "../support/kube.js";
import { conditionOf, ObjectsOf } from "../support/managed.js";
import { startTestOperator, TEST_API_KEY, type TestOperator } from "../support/operator.js";
import { createConnection, removeConnections } from "../support/two-teams.js";

const KEY = "steer-conn-key-0001";
const NAS = { productCode: "nas.capacity.standard", capacityGB: 100 };
let op: TestOperator;
let emulator: RunningEmulator;
let ops = "";
let team = "";
let conns: ObjectsOf;
const names: string[] = [];

beforeAll(async () => {
  const kc = adminKubeConfig();
  [ops, team] = await Promise.all([
    createNamespace(kc, "steer-conn-ops"),
    createNamespace(kc, "steer-conn"),
  ]);
  emulator = await startEmulator({ apiKey: TEST_API_KEY, tenants: [{ name: "a", apiKey: KEY }] });
  op = await startTestOperator({
    controllers: [serviceConnectionController, nasVolumeController],
    namespaces: [team],
    emulator,
    config: {
      connections: { secretNamespace: ops },
      pollIntervalMs: { default: 500, ServiceConnection: 60_000 },
    },
  });
  conns = new ObjectsOf(op.kube, serviceConnectionCrd, "");
}, 60_000);

afterAll(async () => {
  await removeConnections(op?.kube, names);
  await op?.stop();
  await emulator?.stop();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const statusOf = (o: KubeObject) => (o.status ?? {}) as Record<string, unknown>;
/** The requests account a's key made since `since` (a request log sequence number). */
const calls = async (since: number) =>
  (await new EmulatorAdmin(emulator.url).requests({ since })).filter((e) => e.tenant === "a")
    .length;
const lastSeq = async () => (await new EmulatorAdmin(emulator.url).requests()).at(-1)?.seq ?? 0;

/** A Ready ServiceConnection `name` of account a, allowing the test's namespace. */
async function ready(name: string): Promise<KubeObject> {
  names.push(name);
  await createConnection(op.kube, {
    ...{ secret: { namespace: ops, name }, apiKey: KEY, name },
    ...{ baseUrl: emulator.url, allowed: team, allowInsecureHttp: true },
  });
  return conns.waitForCondition(name, "Ready", "True", "Connected");
}

describe("a paused ServiceConnection", () => {
  it("is not checked, even when asked, and writes only ReconcilePaused; resumed, it is checked", async () => {
    const before = await ready("steer-held");
    await conns.annotate("steer-held", { "aidc.io/paused": "true" });
    const paused = await conns.waitForCondition("steer-held", "Synced", "False", "ReconcilePaused");
    // Unused, it carries no finalizer: its deletion would not wait, and it says so.
    expect(conditionOf(paused, "Synced")?.message).not.toContain("deletion waits");
    expect(conditionOf(paused, "Ready")?.status).toBe("True");
    const since = await lastSeq();
    await conns.annotate("steer-held", { "aidc.io/reconcile-requested-at": "while-paused" });
    await sleep(1_500);
    expect(await calls(since)).toBe(0);
    const still = (await conns.get("steer-held")) as KubeObject;
    expect(statusOf(still).lastCheckedTime).toBe(statusOf(before).lastCheckedTime);
    expect(statusOf(still).lastHandledReconcileAt).toBeUndefined();
    await conns.annotate("steer-held", { "aidc.io/paused": null });
    const resumed = await conns.waitFor(
      "steer-held",
      (o) => statusOf(o).lastHandledReconcileAt === "while-paused",
    );
    expect(conditionOf(resumed, "Synced")?.reason).toBe("ReconcileSuccess");
    expect(await calls(since)).toBeGreaterThan(0);
  });

  it("in use: its deletion waits, after its objects are gone, until it is resumed", async () => {
    await ready("steer-used");
    const volumes = new ObjectsOf(op.kube, nasVolumeCrd, team);
    await volumes.create("on-paused", { ...NAS, connectionRef: { name: "steer-used" } });
    await volumes.waitForCondition("on-paused", "Ready", "True", undefined, 30_000);
    await conns.waitFor("steer-used", (o) => (o.metadata?.finalizers ?? []).length > 0);
    await conns.annotate("steer-used", { "aidc.io/paused": "true" });
    const paused = await conns.waitForCondition("steer-used", "Synced", "False", "ReconcilePaused");
    expect(conditionOf(paused, "Synced")?.message).toContain("(a deletion waits too)");
    await volumes.delete("on-paused");
    await volumes.waitForGone("on-paused");
    await conns.delete("steer-used");
    await sleep(1_500);
    expect(await conns.get("steer-used")).toBeDefined();
    await conns.annotate("steer-used", { "aidc.io/paused": null });
    await conns.waitForGone("steer-used");
  });
});

describe("aidc.io/reconcile-requested-at on a ServiceConnection", () => {
  it("checks the key at once and echoes the value in status", async () => {
    const before = await ready("steer-asked");
    const since = await lastSeq();
    await conns.annotate("steer-asked", { "aidc.io/reconcile-requested-at": "now-1" });
    const o = await conns.waitFor(
      "steer-asked",
      (x) => statusOf(x).lastHandledReconcileAt === "now-1",
    );
    expect(statusOf(o).lastCheckedTime).not.toBe(statusOf(before).lastCheckedTime);
    expect(await calls(since)).toBeGreaterThan(0);
  });
});
