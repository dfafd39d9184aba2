/**
 * The BlockVolume controller against a real API server and the emulator: the volume's
 * whole life with the exact requests in order, the detach that a delete waits for, an
 * attachment made by someone else, a reference that resolves late, a create whose
 * answer is lost, and a move that spec.managementPolicies without Update does not make.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { blockVolumeController } from "../../src/controllers/blockvolume/controller.js";
import { ATTACHMENT_ANNOTATION } from "../../src/controllers/blockvolume/decisions.js";
import { cciInstanceController } from "../../src/controllers/cciinstance/controller.js";
import { blockVolumeCrd } from "../../src/crds/blockvolume.js";
import { cciInstanceCrd } from "../../src/crds/cciinstance.js";
import type { RequestLogEntry } from "../../src/emulator/request-log.js";
import { adminKubeConfig, createNamespace } from "../support/kube.js";
import { conditionOf, ObjectsOf } from "../support/managed.js";
import { startTestOperator, type TestOperator } from "../support/operator.js";
import { verdictsOf } from "../support/verdicts.js";

const TRANSITION_MS = 400;
const VOLUME_WRITES = new Set(["createVolume", "attachVolume", "detachVolume", "deleteVolume"]);

describe("BlockVolume controller", () => {
  let op: TestOperator;
  let volumes: ObjectsOf;
  let ccis: ObjectsOf;

  beforeAll(async () => {
    const namespace = await createNamespace(adminKubeConfig(), "blockvolume");
    op = await startTestOperator({
      controllers: [
        (deps) => blockVolumeController(deps, { visibilityGraceMs: 1_000 }),
        cciInstanceController,
      ],
      namespaces: [namespace],
      emulatorOptions: { volumeTransitionMs: TRANSITION_MS },
      // CciInstances poll rarely: what they show of the storage comes from its watch.
      config: { pollIntervalMs: { default: 500, CciInstance: 600_000 } },
    });
    volumes = new ObjectsOf(op.kube, blockVolumeCrd, namespace);
    ccis = new ObjectsOf(op.kube, cciInstanceCrd, namespace);
    await ccis.create("alice", { instanceId: "cci-0001" });
    await ccis.create("bob", { instanceId: "cci-0002" });
    for (const name of ["alice", "bob"]) {
      await ccis.waitFor(name, (o) => Boolean((o.status as { instanceId?: string })?.instanceId));
    }
  }, 60_000);

  afterAll(async () => {
    await op?.stop();
  });

  const volumeIdOf = async (name: string) =>
    String(((await volumes.get(name))?.status as { volumeId?: string } | undefined)?.volumeId);
  /** The requests that change volume `id` (its create found by name), in order. */
  const writesOf = async (id: string, name: string): Promise<RequestLogEntry[]> =>
    (await op.admin.requests()).filter(
      (r) =>
        r.endpoint !== undefined &&
        VOLUME_WRITES.has(r.endpoint) &&
        (r.path.includes(`/v1/volumes/${id}`) ||
          (r.endpoint === "createVolume" && (r.body as { name?: string }).name === name)),
    );
  const statusOf = async (name: string) =>
    (await volumes.get(name))?.status as Record<string, unknown> | undefined;

  it("creates, attaches, moves to another instance, detaches and deletes a volume, with exactly these requests in order", async () => {
    await volumes.create("data", {
      sizeGB: 20,
      volumeType: "ssd",
      description: "scratch",
      attachTo: { cciInstanceRef: { name: "alice" } },
      deletionPolicy: "Delete",
    });
    await volumes.waitFor("data", (o) => {
      const s = o.status as Record<string, unknown> | undefined;
      return conditionOf(o, "Ready")?.reason === "Attached" && s?.attachedInstanceId === "cci-0001";
    });
    expect(await statusOf("data")).toMatchObject({
      phase: "Attached",
      state: "in-use",
      sizeGB: 20,
      volumeType: "ssd",
      attachedInstanceId: "cci-0001",
    });
    const id = await volumeIdOf("data");
    expect((await volumes.get("data"))?.metadata?.annotations?.[ATTACHMENT_ANNOTATION]).toBe(
      "cci-0001",
    );

    // The CciInstance of the instance shows the volume (from the BlockVolume's status).
    const shown = (name: string) =>
      ccis
        .get(name)
        .then((o) => (o?.status as { attachedStorage?: unknown[] } | undefined)?.attachedStorage);
    await ccis.waitFor("alice", (o) =>
      JSON.stringify((o.status as Record<string, unknown>).attachedStorage ?? []).includes(
        '"state":"Attached"',
      ),
    );
    expect(await shown("alice")).toEqual([
      { kind: "BlockVolume", name: "data", id, state: "Attached" },
    ]);

    await volumes.patchSpec("data", { attachTo: { cciInstanceRef: { name: "bob" } } });
    await volumes.waitFor(
      "data",
      (o) =>
        conditionOf(o, "Ready")?.reason === "Attached" &&
        (o.status as Record<string, unknown>).attachedInstanceId === "cci-0002",
    );
    await ccis.waitFor("bob", (o) =>
      JSON.stringify((o.status as Record<string, unknown>).attachedStorage ?? []).includes(
        '"state":"Attached"',
      ),
    );
    expect(await shown("bob")).toEqual([
      { kind: "BlockVolume", name: "data", id, state: "Attached" },
    ]);
    await ccis.waitFor("alice", (o) => !(o.status as Record<string, unknown>).attachedStorage);

    await volumes.patchSpec("data", { attachTo: null });
    await volumes.waitFor(
      "data",
      (o) =>
        conditionOf(o, "Ready")?.reason === "Detached" &&
        (o.status as Record<string, unknown>).attachedInstanceId === undefined,
    );

    await volumes.delete("data");
    await volumes.waitForGone("data");
    const writes = await writesOf(id, "data");
    expect(writes.map((r) => [r.method, r.endpoint, r.body ?? null, r.status])).toEqual([
      [
        "POST",
        "createVolume",
        {
          name: "data",
          sizeGB: 20,
          volumeType: "ssd",
          description: expect.stringMatching(/^scratch \[aidc-token:[^\]]+\] \[aidc-owner:/),
        },
        200,
      ],
      ["POST", "attachVolume", { instanceId: "cci-0001" }, 200],
      ["POST", "detachVolume", { instanceId: "cci-0001" }, 200],
      ["POST", "attachVolume", { instanceId: "cci-0002" }, 200],
      ["POST", "detachVolume", { instanceId: "cci-0002" }, 200],
      ["DELETE", "deleteVolume", null, 200],
    ]);
    expect((await op.admin.state()).volumes.filter((v) => v.id === id)).toEqual([]);
    await volumes.waitForEvents("data", ["Created", "Updated", "Deleted"]);
  }, 60_000);

  it("deletes an attached volume only after the service shows it detached", async () => {
    await volumes.create("held", {
      sizeGB: 5,
      volumeType: "hdd",
      attachTo: { instanceId: "cci-0001" },
      deletionPolicy: "Delete",
    });
    await volumes.waitForCondition("held", "Ready", "True", "Attached");
    const id = await volumeIdOf("held");
    op.emulator.state.behaviour.volumeTransitionMs = 2_000;
    try {
      await volumes.delete("held");
      await volumes.waitForCondition("held", "Ready", "False", "Deleting");
      await volumes.waitForGone("held", 30_000);
    } finally {
      op.emulator.state.behaviour.volumeTransitionMs = TRANSITION_MS;
    }
    const log = (await op.admin.requests()).filter((r) => r.path.includes(`/v1/volumes/${id}`));
    const detach = log.filter((r) => r.endpoint === "detachVolume");
    const deletes = log.filter((r) => r.endpoint === "deleteVolume");
    // One delete, accepted: a delete sent while the volume was still detaching would have
    // been refused (409) and logged.
    expect(detach).toHaveLength(1);
    expect(deletes.map((r) => r.status)).toEqual([200]);
    const [d] = detach;
    const [del] = deletes;
    expect(del?.seq).toBeGreaterThan(d?.seq ?? Number.POSITIVE_INFINITY);
    expect(Date.parse(del?.time ?? "") - Date.parse(d?.time ?? "")).toBeGreaterThanOrEqual(2_000);
    // The volume was read (and found detaching) in between.
    expect(
      log.filter(
        (r) =>
          r.endpoint === "getVolume" && (r.seq ?? 0) > (d?.seq ?? 0) && r.seq < (del?.seq ?? 0),
      ).length,
    ).toBeGreaterThan(0);
  }, 60_000);

  it("reports a volume attached by someone else and never detaches it, not even to delete it", async () => {
    await volumes.create("foreign", { sizeGB: 5, volumeType: "ssd", deletionPolicy: "Delete" });
    const ready = await volumes.waitForCondition("foreign", "Ready", "True", "Detached");
    const id = await volumeIdOf("foreign");
    await op.admin.setVolumeState(id, { status: "in-use", instanceId: "cci-0002" });
    const held = await volumes.waitForCondition("foreign", "Ready", "False", "AttachedElsewhere");
    expect(conditionOf(held, "Ready")?.message).toContain("attached to instance cci-0002");
    const stalled = await volumes.waitForCondition(
      "foreign",
      "Synced",
      "False",
      "AttachedElsewhere",
    );
    expect(conditionOf(stalled, "Stalled")?.status).toBe("True");
    await volumes.waitForEvents("foreign", ["AttachedElsewhere"]);

    await volumes.delete("foreign");
    const deleting = await volumes.waitForCondition("foreign", "Ready", "False", "Deleting");
    expect(conditionOf(deleting, "Ready")?.message).toContain("deletionPolicy Orphan");
    // What GitOps tools make of these states (kstatus and the Argo CD health script).
    expect(verdictsOf([ready, stalled, deleting])).toEqual([
      { kstatus: "Current", argocd: "Healthy" },
      { kstatus: "Failed", argocd: "Degraded" },
      { kstatus: "Terminating", argocd: "Progressing" },
    ]);
    await new Promise((r) => setTimeout(r, 1_500));
    expect(await volumes.get("foreign")).toBeDefined();
    const sent = async () =>
      (await op.admin.requests())
        .filter((r) => r.path.includes(`/v1/volumes/${id}`))
        .map((r) => r.endpoint);
    expect(await sent()).not.toContain("detachVolume");
    expect(await sent()).not.toContain("deleteVolume");

    // Once its owner detaches it, the delete goes ahead.
    await op.admin.setVolumeState(id, { status: "available", instanceId: null });
    await volumes.waitForGone("foreign");
    expect(await sent()).toContain("deleteVolume");
    expect(await sent()).not.toContain("detachVolume");
  }, 60_000);

  it("waits for a CciInstance that does not exist yet, then attaches to its instance", async () => {
    await volumes.create("later", {
      sizeGB: 5,
      volumeType: "ssd",
      attachTo: { cciInstanceRef: { name: "carol" } },
    });
    const waiting = await volumes.waitForCondition(
      "later",
      "ReferencesResolved",
      "False",
      "CciInstanceNotFound",
    );
    expect(conditionOf(waiting, "ReferencesResolved")?.message).toContain("CciInstance carol");
    expect(verdictsOf([waiting])).toEqual([{ kstatus: "InProgress", argocd: "Progressing" }]);
    await ccis.create("carol", { instanceId: "cci-0004" });
    const attached = await volumes.waitForCondition("later", "Ready", "True", "Attached");
    expect((attached.status as Record<string, unknown>).attachedInstanceId).toBe("cci-0004");
  }, 60_000);

  it("says when the CciInstance it waits for is stalled, with that object's reason, so nobody waits for ever", async () => {
    // Another object binds alice's instance: this one is refused, terminally.
    await ccis.create("dave", { instanceId: "cci-0001" });
    await ccis.waitForCondition("dave", "Stalled", "True", "AlreadyBoundRefused");
    await volumes.create("stuck", {
      sizeGB: 5,
      volumeType: "ssd",
      attachTo: { cciInstanceRef: { name: "dave" } },
    });
    const waiting = await volumes.waitFor("stuck", (o) =>
      (conditionOf(o, "Ready")?.message ?? "").includes("it is stalled"),
    );
    expect(conditionOf(waiting, "Ready")).toMatchObject({
      status: "False",
      reason: "CciInstanceNotBound",
    });
    expect(conditionOf(waiting, "Ready")?.message).toMatch(
      /^spec\.attachTo\.cciInstanceRef: CciInstance dave is not bound to an instance yet: it is stalled \(AlreadyBoundRefused: .*already bound/,
    );
    expect(await volumeIdOf("stuck")).toBe("undefined");
    await volumes.delete("stuck");
    await ccis.delete("dave");
    await volumes.waitForGone("stuck");
  }, 60_000);

  it("never creates a volume twice when the create takes effect but its answer is lost", async () => {
    op.emulator.faults.set([
      { kind: "error", endpoint: "createVolume", acting: true, httpStatus: 500, times: 1 },
    ]);
    await volumes.create("lost", { sizeGB: 7, volumeType: "ssd" });
    await volumes.waitForCondition("lost", "Ready", "True", "Detached");
    const named = (await op.admin.state()).volumes.filter((v) => v.name === "lost");
    expect(named).toHaveLength(1);
    expect(await volumeIdOf("lost")).toBe(named[0]?.id);
    expect(
      (await op.admin.requests({ endpoint: "createVolume" })).filter(
        (r) => (r.body as { name?: string }).name === "lost",
      ),
    ).toHaveLength(1);
  }, 60_000);

  it("under Observe, attaches nothing and says in Ready that the volume is not moved; Update back, attaches it", async () => {
    await volumes.create("kept", { sizeGB: 5, volumeType: "ssd" });
    await volumes.waitForCondition("kept", "Ready", "True", "Detached");
    const id = await volumeIdOf("kept");
    await volumes.patchSpec("kept", {
      managementPolicies: ["Observe"],
      attachTo: { cciInstanceRef: { name: "alice" } },
    });
    const held = await volumes.waitForCondition("kept", "Synced", "False", "DriftDetected");
    expect(conditionOf(held, "Synced")?.message).toContain("differs from the spec in attachTo;");
    const ready = await volumes.waitFor("kept", (o) =>
      Boolean(conditionOf(o, "Ready")?.message?.includes("no Update")),
    );
    expect(conditionOf(ready, "Ready")).toMatchObject({
      status: "False",
      message:
        "the volume is available (detached) and spec.attachTo asks for instance cci-0001; spec.managementPolicies has no Update, so it is not moved",
    });
    expect((await writesOf(id, "kept")).map((r) => r.endpoint)).toEqual(["createVolume"]);
    await volumes.patchSpec("kept", { managementPolicies: ["*"] });
    await volumes.waitForCondition("kept", "Ready", "True", "Attached");
    expect((await writesOf(id, "kept")).map((r) => r.endpoint)).toEqual([
      "createVolume",
      "attachVolume",
    ]);
  }, 60_000);
});
