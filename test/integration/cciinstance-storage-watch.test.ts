/**
 * A CciInstance bound by its name shows a storage change that comes while the echo of
 * its binding write is still on its way to the operator's cache: the operator watches
 * the API server through a front that passes CciInstance watch events 2 s late, and
 * polls CciInstances every 10 min, so only the storage watch can carry the change.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cciInstanceController } from "../../src/controllers/cciinstance/controller.js";
import { ANNOTATIONS } from "../../src/controllers/managed/decisions.js";
import { blockVolumeCrd } from "../../src/crds/blockvolume.js";
import { cciInstanceCrd } from "../../src/crds/cciinstance.js";
import { ApiFront } from "../support/api-front.js";
import { adminKubeConfig, createNamespace } from "../support/kube.js";
import { conditionOf, ObjectsOf } from "../support/managed.js";
import { startTestOperator, type TestOperator } from "../support/operator.js";

const LATE_MS = 2_000;

describe("CciInstance: a storage change before its binding shows in the cache", () => {
  let op: TestOperator;
  let front: ApiFront;
  let ns = "";

  beforeAll(async () => {
    const admin = adminKubeConfig();
    ns = await createNamespace(admin, "cci-watch");
    front = await new ApiFront({
      upstream: admin,
      protocols: "h2,http/1.1",
      lateWatchEvents: { match: (path) => path.endsWith("/cciinstances"), ms: LATE_MS },
    }).start();
    op = await startTestOperator({
      controllers: [(deps) => cciInstanceController(deps)],
      namespaces: [ns],
      config: { pollIntervalMs: { default: 500, CciInstance: 600_000 } },
      operatorKubeConfig: front.kubeConfig(),
    });
    await op.admin.seed({ cci: [{ id: "watch-1", name: "watched" }] });
  }, 60_000);

  afterAll(async () => {
    await op?.stop();
    await front?.stop();
  });

  it("shows a volume attached right after the binding write, before its echo reached the cache", async () => {
    const volumes = new ObjectsOf(op.kube, blockVolumeCrd, ns);
    const instances = new ObjectsOf(op.kube, cciInstanceCrd, ns);
    await volumes.create("disk", { sizeGB: 20, volumeType: "ssd" });
    await instances.create("nb", { name: "watched" });
    // Bound and its status written: its attachedStorage was read from the cache then.
    const bound = await instances.waitFor(
      "nb",
      (o) => conditionOf(o, "Bound")?.status === "True",
      15_000,
    );
    expect(bound.metadata?.annotations?.[ANNOTATIONS.externalId]).toBe("watch-1");
    // The operator's cache sees the binding LATE_MS after it was written; the volume's
    // change reaches it before that.
    await op.kube.patchStatus(
      blockVolumeCrd,
      { namespace: ns, name: "disk" },
      { volumeId: "vol-1", attachedInstanceId: "watch-1", phase: "Attached" },
    );
    const shown = await instances.waitFor(
      "nb",
      (o) => ((o.status as { attachedStorage?: unknown[] }).attachedStorage ?? []).length > 0,
      4 * LATE_MS,
    );
    expect((shown.status as { attachedStorage?: unknown[] }).attachedStorage).toEqual([
      { kind: "BlockVolume", name: "disk", id: "vol-1", state: "Attached" },
    ]);
  }, 60_000);
});
