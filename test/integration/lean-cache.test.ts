/**
 * The informer cache keeps objects without managedFields and kubectl's last-applied
 * annotation (runtime/cache.ts, `leanObject`). Objects applied with kubectl carry both;
 * a settled one must still cost no Kubernetes write per poll (a status write is skipped
 * only when the computed status equals the cached one), the annotation must survive
 * the operator's writes on the server, and a change applied with kubectl must still be
 * acted on.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { nasVolumeController } from "../../src/controllers/nasvolume/controller.js";
import { nasVolumeCrd } from "../../src/crds/nasvolume.js";
import { LAST_APPLIED_ANNOTATION } from "../../src/runtime/cache.js";
import { adminKubeConfig, createNamespace } from "../support/kube.js";
import { ObjectsOf } from "../support/managed.js";
import { startTestOperator, type TestOperator } from "../support/operator.js";
import { samples } from "../support/prometheus.js";

const POLL_MS = 500;
const NAMES = ["applied-0", "applied-1", "applied-2"];

/** What `kubectl apply` (client side) stores: the manifest as applied. */
function lastApplied(namespace: string, name: string, spec: Record<string, unknown>): string {
  return JSON.stringify({
    apiVersion: `${nasVolumeCrd.group}/${nasVolumeCrd.version}`,
    kind: nasVolumeCrd.kind,
    metadata: { annotations: {}, name, namespace },
    spec,
  });
}

describe("objects applied with kubectl, cached lean", () => {
  let op: TestOperator;
  let nas: ObjectsOf;
  let namespace = "";
  const spec = { productCode: "nas.capacity.standard", capacityGB: 100 };

  beforeAll(async () => {
    namespace = await createNamespace(adminKubeConfig(), "lean-cache");
    op = await startTestOperator({
      controllers: [nasVolumeController],
      namespaces: [namespace],
      pollIntervalMs: POLL_MS,
    });
    nas = new ObjectsOf(op.kube, nasVolumeCrd, namespace);
    for (const name of NAMES) {
      await nas.create(name, spec, {
        [LAST_APPLIED_ANNOTATION]: lastApplied(namespace, name, spec),
      });
    }
    for (const name of NAMES) await nas.waitForCondition(name, "Ready", "True", "Available");
    // The polls right after the creates are behind us.
    await new Promise((r) => setTimeout(r, 3 * POLL_MS));
  }, 90_000);

  afterAll(async () => {
    await op?.stop();
  });

  const figures = async () => {
    const text = await op.manager.metrics.text();
    const sum = (name: string, keep: (l: Record<string, string>) => boolean) =>
      samples(text, name)
        .filter((s) => keep(s.labels))
        .reduce((n, s) => n + s.value, 0);
    return {
      writes: sum("rest_client_requests_total", (l) => l.method !== "GET"),
      reconciles: sum("controller_runtime_reconcile_total", () => true),
    };
  };

  it("polls settled objects without a single write, and leaves the annotation on the server", async () => {
    const cached = op.manager.cache.get(nasVolumeCrd, { namespace, name: "applied-0" });
    expect(cached?.metadata?.annotations).not.toHaveProperty(LAST_APPLIED_ANNOTATION);
    expect(cached?.metadata).not.toHaveProperty("managedFields");
    const versions = await Promise.all(NAMES.map(async (n) => (await nas.get(n))?.metadata));
    const before = await figures();
    await new Promise((r) => setTimeout(r, 8 * POLL_MS));
    const after = await figures();
    // Routine polls ran (about one per object and poll) and wrote nothing.
    expect(after.reconciles - before.reconciles).toBeGreaterThanOrEqual(NAMES.length * 4);
    expect(after.writes - before.writes).toBe(0);
    for (const [i, name] of NAMES.entries()) {
      const now = await nas.get(name);
      expect(now?.metadata?.resourceVersion).toBe(versions[i]?.resourceVersion);
      expect(now?.metadata?.annotations?.[LAST_APPLIED_ANNOTATION]).toBe(
        lastApplied(namespace, name, spec),
      );
      expect(now?.metadata?.managedFields?.length).toBeGreaterThan(0);
    }
  }, 30_000);

  it("acts on a change applied with kubectl (spec and annotation in one write)", async () => {
    const changed = { ...spec, mountPath: "/data/applied_1" };
    await op.kube.patch(
      nasVolumeCrd,
      { namespace, name: "applied-1" },
      {
        metadata: {
          annotations: { [LAST_APPLIED_ANNOTATION]: lastApplied(namespace, "applied-1", changed) },
        },
        spec: { mountPath: changed.mountPath },
      },
    );
    const obj = await nas.waitFor(
      "applied-1",
      (o) => (o.status as { mountPath?: string } | undefined)?.mountPath === changed.mountPath,
    );
    expect(obj.metadata?.annotations?.[LAST_APPLIED_ANNOTATION]).toBe(
      lastApplied(namespace, "applied-1", changed),
    );
  }, 30_000);
});
