import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { operatorConfigSchema } from "../../src/config/schema.js";
import { ANNOTATIONS } from "../../src/controllers/managed/decisions.js";
import { nasVolumeController } from "../../src/controllers/nasvolume/controller.js";
import { nasVolumeCrd } from "../../src/crds/nasvolume.js";
import { adminKubeConfig, createNamespace } from "../support/kube.js";
import { ObjectsOf } from "../support/managed.js";
import { startTestOperator, type TestOperator } from "../support/operator.js";

const defaults = operatorConfigSchema.parse({
  service: { baseUrl: "https://service.example.com" },
});

/**
 * Objects whose service reads hang do not starve the rest: with the default workers
 * per controller (config `concurrency`), a new object is served at once while two
 * others wait on reads that never answer; with only two workers, the bound on one
 * reconcile (config `reconcileTimeoutMs`) frees them. docs/performance.md ("The
 * service's HTTP client, and workers") has the figures (two workers without the
 * bound: 29 s).
 */
describe.each([
  { setup: "the default workers", config: { concurrency: defaults.concurrency } },
  {
    setup: "two workers and a 3 s bound on a reconcile",
    config: { concurrency: { default: 2 }, reconcileTimeoutMs: 3_000 },
  },
])("workers while service reads hang, with $setup", ({ config }) => {
  let op: TestOperator;
  let nas: ObjectsOf;
  let namespace = "";

  beforeAll(async () => {
    namespace = await createNamespace(adminKubeConfig(), "starve");
    op = await startTestOperator({
      controllers: [(deps) => nasVolumeController(deps, { visibilityGraceMs: 1_000 })],
      namespaces: [namespace],
      config,
    });
    nas = new ObjectsOf(op.kube, nasVolumeCrd, namespace);
  }, 60_000);

  afterAll(async () => {
    await op?.stop();
  });

  it("a new object becomes Ready in seconds while two others' detail reads hang", async () => {
    const ids: string[] = [];
    for (const name of ["hang-a", "hang-b"]) {
      await nas.create(name, { productCode: "nas.capacity.standard" });
      const obj = await nas.waitForCondition(name, "Ready", "True");
      ids.push(obj.metadata?.annotations?.[ANNOTATIONS.externalId] as string);
    }
    // Every read of the two hangs past the client's timeout, on every attempt.
    await op.admin.setFaults(
      ids.map((id) => ({
        kind: "latency" as const,
        pathPrefix: `/v1/nasStorage/instance/${id}/`,
        latencyMs: 120_000,
      })),
    );
    try {
      // Let both hang reconciles take their workers.
      await new Promise((r) => setTimeout(r, 1_500));
      const started = Date.now();
      await nas.create("fresh", { productCode: "nas.capacity.standard" });
      await nas.waitForCondition("fresh", "Ready", "True", undefined, 30_000);
      const readyMs = Date.now() - started;
      // Two workers without the bound waited for a hung reconcile to give up.
      expect(readyMs).toBeLessThan(10_000);
    } finally {
      await op.admin.clearFaults();
    }
  }, 90_000);
});
