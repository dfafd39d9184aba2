/**
 * Steering a CciInstance, the kind outside the managed loop, against the real API
 * server and the emulator: aidc.io/paused (nothing sent, no write but the managed
 * loop's ReconcilePaused condition) and aidc.io/reconcile-requested-at (the list and
 * the detail read at once, echoed in status.lastHandledReconcileAt). The emulator's
 * request log is the evidence of what was (not) sent.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cciInstanceController } from "../../src/controllers/cciinstance/controller.js";
import { cciInstanceCrd } from "../../src/crds/cciinstance.js";
import type { KubeObject } from "../../src/runtime/resource.js";
import { adminKubeConfig, createNamespace } from "../support/kube.js";
import { conditionOf, ObjectsOf } from "../support/managed.js";
import { startTestOperator, type TestOperator } from "../support/operator.js";
import { verdictsOf } from "../support/verdicts.js";

const POLL_MS = 500;
let op: TestOperator;
let ns = "";
let cci: ObjectsOf;

beforeAll(async () => {
  ns = await createNamespace(adminKubeConfig(), "steer-cci");
  op = await startTestOperator({
    controllers: [(deps) => cciInstanceController(deps, { snapshotTtlMs: 60_000 })],
    namespaces: [ns],
    pollIntervalMs: POLL_MS,
  });
  await op.admin.seed({
    cci: [
      { id: "held-1", name: "held" },
      { id: "new-1", name: "paused-new" },
      { id: "asked-1", name: "asked" },
    ],
  });
  cci = new ObjectsOf(op.kube, cciInstanceCrd, ns);
}, 60_000);

afterAll(async () => {
  await op?.stop();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const statusOf = (o: KubeObject) => (o.status ?? {}) as Record<string, unknown>;
/** The requests of the CCI endpoints since `since` (a request log sequence number). */
const cciCalls = async (since: number) =>
  (await op.admin.requests({ since })).filter((e) => e.path.startsWith("/v1/cci"));
const lastSeq = async () => (await op.admin.requests()).at(-1)?.seq ?? 0;

describe("a paused CciInstance", () => {
  it("sends nothing and writes only ReconcilePaused; removing the annotation resumes", async () => {
    await cci.create("held", { instanceId: "held-1" });
    await cci.waitForCondition("held", "Ready", "True");
    await cci.annotate("held", { "aidc.io/paused": "true" });
    const paused = await cci.waitForCondition("held", "Synced", "False", "ReconcilePaused");
    expect(conditionOf(paused, "Synced")?.message).toContain('aidc.io/paused is "true"');
    // Ready stays as it was: kstatus reads the object as before the pause.
    expect(conditionOf(paused, "Ready")?.status).toBe("True");
    const since = await lastSeq();
    const images = [{ imageName: "team/held", tag: "v1" }];
    const patched = await cci.patchSpec("held", { images });
    // The condition follows the new generation; then nothing more is written.
    const generation = patched.metadata?.generation;
    const noted = await cci.waitFor(
      "held",
      (o) => conditionOf(o, "Synced")?.observedGeneration === generation,
    );
    await sleep(POLL_MS * 4);
    expect(await cciCalls(since)).toEqual([]);
    const still = (await cci.get("held")) as KubeObject;
    expect(statusOf(still).images).toBeUndefined();
    expect(still.metadata?.resourceVersion).toBe(noted.metadata?.resourceVersion);
    await cci.annotate("held", { "aidc.io/paused": null });
    const requested = (o: KubeObject) =>
      ((statusOf(o).images ?? []) as { state?: string }[]).some((i) => i.state !== "Pending");
    const resumed = await cci.waitFor("held", requested);
    expect(conditionOf(resumed, "Synced")?.reason).toBe("ReconcileSuccess");
    const saves = await op.admin.requests({ since, endpoint: "saveCciImage" });
    expect(saves.map((e) => e.body)).toEqual(images);
    await cci.delete("held");
  });

  it("paused at creation: binds nothing, Ready=False so kstatus waits and Argo CD shows Suspended", async () => {
    const since = await lastSeq();
    await cci.create("paused-new", { instanceId: "new-1" }, { "aidc.io/paused": "true" });
    const paused = await cci.waitForCondition("paused-new", "Ready", "False", "ReconcilePaused");
    expect(conditionOf(paused, "Synced")?.reason).toBe("ReconcilePaused");
    expect(verdictsOf([paused])).toEqual([{ kstatus: "InProgress", argocd: "Suspended" }]);
    await sleep(POLL_MS * 3);
    expect(await cciCalls(since)).toEqual([]);
    expect(paused.metadata?.annotations?.["aidc.io/external-id"]).toBeUndefined();
    await cci.annotate("paused-new", { "aidc.io/paused": null });
    const bound = await cci.waitForCondition("paused-new", "Ready", "True");
    expect(statusOf(bound).instanceId).toBe("new-1");
    await cci.delete("paused-new");
  });
});

describe("aidc.io/reconcile-requested-at on a CciInstance", () => {
  it("reads the list and the detail at once and echoes the value in status", async () => {
    await cci.create("asked", { instanceId: "asked-1" });
    await cci.waitForCondition("asked", "Ready", "True");
    // Settled, and the snapshot (60 s) answers every poll: no call until asked.
    await sleep(POLL_MS * 3);
    const since = await lastSeq();
    await op.admin.setCciState("asked-1", { status: "STOPPED", subStatus: "STOPPED" });
    await sleep(POLL_MS * 3);
    expect(statusOf((await cci.get("asked")) as KubeObject).remoteStatus).toBe("RUNNING");
    await cci.annotate("asked", { "aidc.io/reconcile-requested-at": "now-1" });
    const o = await cci.waitFor("asked", (x) => statusOf(x).lastHandledReconcileAt === "now-1");
    expect(statusOf(o).remoteStatus).toBe("STOPPED");
    const calls = await cciCalls(since);
    expect(calls.some((e) => e.endpoint === "getCci" && e.path.includes("asked-1"))).toBe(true);
    expect(calls.some((e) => e.endpoint === "listCci")).toBe(true);
    // Handled once: the next polls read the snapshot again.
    const after = await lastSeq();
    await sleep(POLL_MS * 3);
    expect((await cciCalls(after)).filter((e) => e.endpoint === "getCci")).toEqual([]);
  });
});
