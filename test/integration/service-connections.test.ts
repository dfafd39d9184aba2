/**
 * Two teams, two accounts, one operator and one emulator with two keys (tenants), on
 * the real API server: each namespace's objects are created under its own account;
 * a namespace that names a connection it may not use gets a terminal condition and no
 * call; rotating one account's Secret affects only that account's objects; deleting a
 * connection in use is held until its objects are gone; objects that name no
 * connection keep using the operator's own (default) configuration.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { blockVolumeController } from "../../src/controllers/blockvolume/controller.js";
import { serviceConnectionController } from "../../src/controllers/connections/controller.js";
import { SECRETS } from "../../src/controllers/connections/secrets.js";
import { nasVolumeController } from "../../src/controllers/nasvolume/controller.js";
import { blockVolumeCrd } from "../../src/crds/blockvolume.js";
import { nasVolumeCrd } from "../../src/crds/nasvolume.js";
import { serviceConnectionCrd } from "../../src/crds/serviceconnection.js";
import { type RunningEmulator, startEmulator } from "../../src/emulator/server.js";
import type { KubeObject } from "../../src/runtime/resource.js";
import { adminKubeConfig, createNamespace, eventually } from "../support/kube.js";
import { conditionOf, ObjectsOf } from "../support/managed.js";
import { startTestOperator, TEST_API_KEY, type TestOperator } from "../support/operator.js";
import { connectTwoTeams, removeConnections } from "../support/two-teams.js";
import { verdictsOf } from "../support/verdicts.js";

const KEY_A = "team-a-account-key-0001";
const KEY_A_ROTATED = "team-a-account-key-0002";
const KEY_B = "team-b-account-key-0001";
const NAS = { productCode: "nas.capacity.standard", capacityGB: 100 };
const b64 = (s: string) => Buffer.from(s).toString("base64");

let op: TestOperator;
let emulator: RunningEmulator;
let ops = "";
let teamA = "";
let teamB = "";
let connA = "";
let connB = "";
/** ServiceConnections captured in their states, for the GitOps verdicts. */
const captured = new Map<string, KubeObject>();
/** The `connection` label of every call a ServiceConnection's client made. */
const labels = new Set<string>();
const nas = (ns: string) => new ObjectsOf(op.kube, nasVolumeCrd, ns);
const conns = () => new ObjectsOf(op.kube, serviceConnectionCrd, "");
const bvs = (ns: string) => new ObjectsOf(op.kube, blockVolumeCrd, ns);

/** The NAS names of one emulator account. */
async function nasNamesOf(tenant: string): Promise<string[]> {
  return (await op.admin.state(tenant)).nas.map((n) => String(n.name)).sort();
}

beforeAll(async () => {
  const kc = adminKubeConfig();
  [ops, teamA, teamB] = await Promise.all([
    createNamespace(kc, "conn-ops"),
    createNamespace(kc, "conn-a"),
    createNamespace(kc, "conn-b"),
  ]);
  connA = `${teamA}-account`;
  connB = `${teamB}-account`;
  emulator = await startEmulator({
    apiKey: TEST_API_KEY,
    subscriptionDelayMs: 300,
    volumeTransitionMs: 200,
    tenants: [
      { name: "a", apiKey: KEY_A },
      { name: "b", apiKey: KEY_B },
    ],
  });
  op = await startTestOperator({
    controllers: [nasVolumeController, blockVolumeController, serviceConnectionController],
    namespaces: [teamA, teamB],
    emulator,
    onConnectionRequest: (info) => labels.add(info.connection ?? ""),
    config: {
      connections: { secretNamespace: ops },
      pollIntervalMs: { default: 500 },
      holdBackoff: { baseMs: 1_000, maxMs: 2_000 },
    },
  });
  await connectTwoTeams(op.kube, {
    ...{ ops, teamA, teamB, connA, connB },
    ...{ keyA: KEY_A, keyB: KEY_B, baseUrl: emulator.url },
  });
}, 60_000);

afterAll(async () => {
  await removeConnections(op?.kube, [connA, connB]);
  await op?.stop();
  await emulator?.stop();
});

describe("service connections", () => {
  it("creates each namespace's objects under its own account, and the rest under the default", async () => {
    await nas(teamA).create("data-a", { ...NAS, connectionRef: { name: connA } });
    await nas(teamB).create("data-b", NAS);
    // No connectionRef and no namespace annotation: the operator's own configuration.
    await nas(teamA).create("data-default", NAS);
    for (const [ns, name] of [
      [teamA, "data-a"],
      [teamB, "data-b"],
      [teamA, "data-default"],
    ] as const) {
      await nas(ns).waitForCondition(name, "Ready", "True", undefined, 30_000);
    }
    expect(await nasNamesOf("a")).toEqual(["data-a"]);
    expect(await nasNamesOf("b")).toEqual(["data-b"]);
    expect(await nasNamesOf("default")).toEqual(["data-default"]);
    // Each connection is Ready (its key accepted) and counts its objects.
    for (const name of [connA, connB]) {
      const conn = await conns().waitFor(
        name,
        (o) =>
          conditionOf(o, "Ready")?.reason === "Connected" &&
          (o.status as { objectsUsing?: number }).objectsUsing === 1,
        20_000,
      );
      expect(conditionOf(conn, "Ready")?.status).toBe("True");
      // In use: held by the finalizer.
      expect(conn.metadata?.finalizers).toContain("aidc.io/serviceconnection");
      captured.set("ready", conn);
    }
    // Account a's storage is invisible to b's key: every request was its own account's.
    const requests = await op.admin.requests({ endpoint: "subscribeNas" });
    const byName = Object.fromEntries(
      requests.map((r) => [
        (r.body as { storageParams?: { name?: string } }).storageParams?.name,
        r.tenant,
      ]),
    );
    expect(byName).toEqual({ "data-a": "a", "data-b": "b", "data-default": "default" });
    // Each connection's calls carry its name as the metrics label `connection`.
    expect([...labels].sort()).toEqual([connA, connB].sort());
  }, 60_000);

  it("creates each team's BlockVolume once, in its own account, through a create that acted and then failed", async () => {
    // The first create of each account takes effect and then answers 500: the outcome is
    // unknown, so each volume is found again by its client token in its own account.
    emulator.faults.set([
      { kind: "error", endpoint: "createVolume", acting: true, httpStatus: 500, times: 2 },
    ]);
    const VOLUME = { sizeGB: 8, volumeType: "ssd" };
    await bvs(teamA).create("scratch-a", { ...VOLUME, connectionRef: { name: connA } });
    await bvs(teamB).create("scratch-b", VOLUME);
    for (const [ns, name] of [
      [teamA, "scratch-a"],
      [teamB, "scratch-b"],
    ] as const) {
      await bvs(ns).waitForCondition(name, "Ready", "True", "Detached", 30_000);
    }
    emulator.faults.set([]);
    const volumeNames = async (tenant: string) =>
      (await op.admin.state(tenant)).volumes.map((v) => String(v.name)).sort();
    expect(await volumeNames("a")).toEqual(["scratch-a"]);
    expect(await volumeNames("b")).toEqual(["scratch-b"]);
    expect(await volumeNames("default")).toEqual([]);
    const creates = await op.admin.requests({ endpoint: "createVolume" });
    expect(creates.map((r) => [(r.body as { name?: string }).name, r.tenant]).sort()).toEqual([
      ["scratch-a", "a"],
      ["scratch-b", "b"],
    ]);
    // Both creates were the faulted ones: they acted, answered 500, and were not sent again.
    expect(creates.map((r) => r.acted)).toEqual([true, true]);
    // Settled, each account's volumes are polled from that account's own list walk.
    const since = Date.now();
    await new Promise((r) => setTimeout(r, 2_000));
    const lists = (await op.admin.requests({ endpoint: "listVolumes" })).filter(
      (r) => Date.parse(String(r.time)) >= since,
    );
    expect(new Set(lists.map((r) => r.tenant))).toEqual(new Set(["a", "b"]));
    expect(
      (await op.admin.requests({ endpoint: "getVolume" })).filter(
        (r) => Date.parse(String(r.time)) >= since + 1_000,
      ),
    ).toEqual([]);
    // Orphaned (the default policy): the connections are free for the deletion test.
    await bvs(teamA).delete("scratch-a");
    await bvs(teamB).delete("scratch-b");
    await bvs(teamA).waitForGone("scratch-a");
    await bvs(teamB).waitForGone("scratch-b");
  }, 60_000);

  it("refuses a connection the namespace may not use, terminally, without any call", async () => {
    const since = (await op.admin.requests()).at(-1)?.seq ?? 0;
    await nas(teamB).create("borrowed", { ...NAS, connectionRef: { name: connA } });
    const obj = await nas(teamB).waitForCondition(
      "borrowed",
      "Synced",
      "False",
      "ConnectionNotAllowed",
    );
    expect(conditionOf(obj, "Ready")).toMatchObject({
      status: "False",
      reason: "ConnectionNotAllowed",
    });
    expect(conditionOf(obj, "Stalled")?.status).toBe("True");
    expect(conditionOf(obj, "Synced")?.message).toContain(`does not allow namespace ${teamB}`);
    // Several polls later still nothing was sent for it, to any account.
    await new Promise((r) => setTimeout(r, 2_000));
    const sent = (await op.admin.requests({ since })).filter((e) =>
      JSON.stringify(e.body ?? "").includes("borrowed"),
    );
    expect(sent).toEqual([]);
    expect(await nasNamesOf("a")).toEqual(["data-a"]);
  }, 30_000);

  it("rotating one account's key affects only that account's objects", async () => {
    const readyB = conditionOf(await nas(teamB).get("data-b"), "Ready");
    // The service takes a new key for account a; the Secret still has the old one.
    await op.admin.setTenant("a", KEY_A_ROTATED);
    await conns().waitForCondition(connA, "Ready", "False", "ApiKeyRefused", 20_000);
    await nas(teamA).waitFor(
      "data-a",
      (o) => conditionOf(o, "Synced")?.reason === "ApiKeyRefused",
      20_000,
    );
    // The Secret is rotated: account a's objects are tried again at once and recover.
    await op.kube.patch(
      SECRETS,
      { namespace: ops, name: "key-a" },
      { data: { apiKey: b64(KEY_A_ROTATED) } },
    );
    await nas(teamA).waitFor(
      "data-a",
      (o) =>
        conditionOf(o, "Synced")?.status === "True" && conditionOf(o, "Ready")?.status === "True",
      20_000,
    );
    await conns().waitForCondition(connA, "Ready", "True", "Connected", 20_000);
    // Account b's object never noticed, and the default account's neither.
    const afterB = await nas(teamB).get("data-b");
    expect(conditionOf(afterB, "Ready")).toMatchObject({
      status: "True",
      lastTransitionTime: readyB?.lastTransitionTime,
    });
    expect(conditionOf(await nas(teamA).get("data-default"), "Ready")?.status).toBe("True");
    // No key in any status, condition or Event.
    const everything = JSON.stringify([
      await nas(teamA).get("data-a"),
      await nas(teamB).get("data-b"),
      await conns().get(connA),
      await nas(teamA).eventReasons("data-a"),
    ]);
    for (const key of [KEY_A, KEY_A_ROTATED, KEY_B]) expect(everything).not.toContain(key);
  }, 60_000);

  it("holds the deletion of a connection in use until its objects are gone", async () => {
    await op.kube.delete(serviceConnectionCrd, { namespace: "", name: connB });
    const held = await conns().waitForCondition(connB, "Ready", "False", "InUse", 20_000);
    captured.set("deleting", held);
    expect(held.metadata?.deletionTimestamp).toBeDefined();
    expect(conditionOf(held, "Ready")?.message).toContain(`NasVolume ${teamB}/data-b`);
    // Still held a while later.
    await new Promise((r) => setTimeout(r, 1_500));
    expect(await conns().get(connB)).toBeDefined();
    await nas(teamB).delete("data-b");
    await nas(teamB).delete("borrowed");
    await nas(teamB).waitForGone("data-b");
    await eventually(
      async () => ((await conns().get(connB)) === undefined ? true : undefined),
      20_000,
    );
  }, 60_000);

  it("tells a base URL at the wrong path (the right key) from a refused key: CheckRefused, the Secret is not blamed", async () => {
    const name = `${teamA}-wrongpath`;
    await op.kube.create(serviceConnectionCrd, {
      apiVersion: "aidc.io/v1alpha1",
      kind: "ServiceConnection",
      metadata: { name },
      spec: {
        baseUrl: `${emulator.url}/api/v2`,
        allowInsecureHttp: true,
        apiKeySecretRef: { namespace: ops, name: "key-a", key: "apiKey" },
      },
    });
    const refused = await conns().waitForCondition(name, "Ready", "False", "CheckRefused");
    expect(conditionOf(refused, "Ready")?.message).toMatch(
      /^the service refused the authenticated check call, not for the key: GET \/v1\/cci\/instance\/list answered HTTP 404 without a service envelope/,
    );
    expect(conditionOf(refused, "Stalled")?.status).toBe("True");
    await op.kube.delete(serviceConnectionCrd, { namespace: "", name });
  }, 30_000);

  it("says why a connection's Secret cannot be read, and reads as its state to kstatus and Argo CD", async () => {
    const name = `${teamA}-nokey`;
    await op.kube.create(serviceConnectionCrd, {
      apiVersion: "aidc.io/v1alpha1",
      kind: "ServiceConnection",
      metadata: { name },
      spec: {
        baseUrl: emulator.url,
        allowInsecureHttp: true,
        apiKeySecretRef: { namespace: ops, name: "no-such-secret", key: "apiKey" },
      },
    });
    const unreadable = await conns().waitForCondition(name, "Ready", "False", "SecretUnreadable");
    expect(conditionOf(unreadable, "Ready")?.message).toBe(
      `the Secret ${ops}/no-such-secret does not exist`,
    );
    captured.set("terminal", unreadable);
    // Unused: no finalizer, so it goes at once (also without the operator).
    expect(unreadable.metadata?.finalizers ?? []).toEqual([]);
    await op.kube.delete(serviceConnectionCrd, { namespace: "", name });
    expect(await conns().get(name)).toBeUndefined();
    const states = ["ready", "terminal", "deleting"];
    const objects = states.map((s) => {
      const obj = captured.get(s);
      if (!obj) throw new Error(`${s} was not captured`);
      return obj;
    });
    expect(verdictsOf(objects)).toEqual([
      { kstatus: "Current", argocd: "Healthy" },
      { kstatus: "Failed", argocd: "Degraded" },
      { kstatus: "Terminating", argocd: "Progressing" },
    ]);
  }, 30_000);
});
