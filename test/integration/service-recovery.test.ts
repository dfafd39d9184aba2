/**
 * Recovery without a restart (issue 15, item 3 and the 403 half of item 4): objects
 * held by a failure the service caused come back to Ready by themselves, on the slow
 * hold backoff or at once when the API key file changes.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ERR } from "../../src/controllers/managed/run.js";
import { nasVolumeController } from "../../src/controllers/nasvolume/controller.js";
import { trainingJobController } from "../../src/controllers/trainingjob/controller.js";
import { nasVolumeCrd } from "../../src/crds/nasvolume.js";
import { trainingJobCrd } from "../../src/crds/trainingjob.js";
import { EmulatorAdmin } from "../../src/emulator/admin-client.js";
import { type RunningEmulator, startEmulator } from "../../src/emulator/server.js";
import { HOLD_RETRY_NOTE } from "../../src/runtime/errors.js";
import { KubeClient } from "../../src/runtime/kube.js";
import { installCrds } from "../support/crds.js";
import { adminKubeConfig, createNamespace, eventually } from "../support/kube.js";
import { conditionOf, ObjectsOf } from "../support/managed.js";
import { startTestOperator, TEST_API_KEY } from "../support/operator.js";
import { runInProcess } from "../support/run-operator.js";

const NAS_SPEC = { productCode: "nas.capacity.standard", capacityGB: 100 };
const JOB_SPEC = {
  image: "registry.example.com/ml/train:1",
  productCode: "train.cpu.16",
  workerCount: 1,
};
// The spec names no deletes; the emulator serves these.
const DELETES = {
  deleteNas: "DELETE /v1/nasStorage/instance/{id}",
  deleteTrainingTask: "DELETE /v1/training/instance/{id}",
};

describe("recovery from a service that refused the operator", () => {
  it("brings every object back to Ready within the hold backoff after a burst of 403s, without a restart", async () => {
    const namespace = await createNamespace(adminKubeConfig(), "hold-403");
    const op = await startTestOperator({
      controllers: [nasVolumeController],
      namespaces: [namespace],
      config: { holdBackoff: { baseMs: 1_000, maxMs: 2_000 } },
    });
    try {
      const nas = new ObjectsOf(op.kube, nasVolumeCrd, namespace);
      await nas.create("before", NAS_SPEC);
      await nas.waitForCondition("before", "Ready", "True");

      await op.admin.setFaults([{ kind: "error", status: 403, message: "Forbidden" }]);
      await nas.create("during", NAS_SPEC);
      // The object that was Ready no longer claims it; the new one says why it is not.
      const held = await nas.waitForCondition("before", "Ready", "Unknown", "ApiKeyRefused");
      expect(conditionOf(held, "Synced")).toMatchObject({
        status: "False",
        reason: "ApiKeyRefused",
      });
      const fresh = await nas.waitForCondition("during", "Ready", "False", "ApiKeyRefused");
      expect(conditionOf(fresh, "Ready")?.message).toMatch(/API key/);
      expect(JSON.stringify(fresh)).not.toContain(TEST_API_KEY);

      await op.admin.clearFaults();
      const cleared = Date.now();
      await nas.waitForCondition("before", "Ready", "True", undefined, 10_000);
      await nas.waitForCondition("during", "Ready", "True", undefined, 10_000);
      expect(conditionOf(await nas.get("before"), "Synced")?.status).toBe("True");
      // The bound is the hold backoff (2 s) plus a reconcile, not a restart.
      expect(Date.now() - cleared).toBeLessThan(8_000);
      expect((await op.admin.state()).nas.filter((n) => n.name === "during")).toHaveLength(1);
    } finally {
      await op.stop();
    }
  });
});

describe("recovery from a read the service refused", () => {
  it("reads a NAS again on the hold backoff once the service stops refusing its detail read (400), with no change of the object", async () => {
    const namespace = await createNamespace(adminKubeConfig(), "hold-read");
    const op = await startTestOperator({
      controllers: [nasVolumeController],
      namespaces: [namespace],
      config: { holdBackoff: { baseMs: 1_000, maxMs: 2_000 } },
    });
    try {
      const nas = new ObjectsOf(op.kube, nasVolumeCrd, namespace);
      await nas.create("blip", NAS_SPEC);
      await nas.waitForCondition("blip", "Ready", "True");
      const id = String((await nas.get("blip"))?.metadata?.annotations?.["aidc.io/external-id"]);

      await op.admin.setFaults([
        { kind: "error", endpoint: "getNas", status: 400, message: "try later" },
      ]);
      // A requested reconcile reads the NAS in detail: that read is refused.
      await nas.annotate("blip", { "aidc.io/reconcile-requested-at": "1" });
      const held = await nas.waitForCondition("blip", "Synced", "False", "ReadRefused");
      // Said by the runtime that holds the key, once: the retry it really makes.
      const said = `GET /v1/nasStorage/instance/${id}/detail was refused by the service with status 400: try later; ${HOLD_RETRY_NOTE}`;
      expect(conditionOf(held, "Synced")?.message).toBe(`${ERR.observe}: ${said}`);
      // The read cannot be vouched for: Ready is Unknown with the same reason, and Stalled.
      expect(conditionOf(held, "Ready")).toMatchObject({
        status: "Unknown",
        reason: "ReadRefused",
        message: `${ERR.observe}: ${said}`,
      });
      expect(conditionOf(held, "Stalled")?.status).toBe("True");

      // The refusals pass: the next read, on the hold backoff, succeeds by itself.
      await op.admin.clearFaults();
      const cleared = Date.now();
      const back = await nas.waitForCondition("blip", "Synced", "True", undefined, 10_000);
      expect(conditionOf(back, "Ready")?.status).toBe("True");
      expect(conditionOf(back, "Stalled")).toBeUndefined();
      expect(Date.now() - cleared).toBeLessThan(8_000);
      expect(back.metadata?.generation).toBe(held.metadata?.generation);
    } finally {
      await op.stop();
    }
  });
});

describe("detail reads refused with HTTP 400", () => {
  it("holds a bound NasVolume and TrainingJob with ReadRefused, orders and deletes nothing, and brings both back once the reads answer", async () => {
    const namespace = await createNamespace(adminKubeConfig(), "hold-reads");
    const op = await startTestOperator({
      controllers: [nasVolumeController, trainingJobController],
      namespaces: [namespace],
      config: { holdBackoff: { baseMs: 1_000, maxMs: 2_000 } },
      emulatorOptions: { subscriptionDelayMs: 300 },
      service: { endpoints: DELETES },
    });
    try {
      const nas = new ObjectsOf(op.kube, nasVolumeCrd, namespace);
      const jobs = new ObjectsOf(op.kube, trainingJobCrd, namespace);
      await nas.create("vol", { ...NAS_SPEC, deletionPolicy: "Delete" });
      await jobs.create("job", { ...JOB_SPEC, deletionPolicy: "Delete" });
      await nas.waitForCondition("vol", "Ready", "True");
      await jobs.waitForCondition("job", "Ready", "True", undefined, 30_000);
      const before = await op.admin.state();

      const refused = {
        kind: "error",
        status: 400,
        httpStatus: 400,
        message: "try later",
      } as const;
      await op.admin.setFaults([
        { ...refused, endpoint: "getNas" },
        { ...refused, endpoint: "getTrainingTask" },
      ]);
      const since = (await op.admin.requests()).at(-1)?.seq ?? 0;
      // Changes that, read, would order a scale and a description update.
      await nas.patchSpec("vol", { capacityGB: 200 });
      await jobs.patchSpec("job", { description: "changed while refused" });
      for (const [objects, name] of [
        [nas, "vol"],
        [jobs, "job"],
      ] as const) {
        const held = await objects.waitForCondition(name, "Synced", "False", "ReadRefused");
        expect(conditionOf(held, "Ready")).toMatchObject({
          status: "Unknown",
          reason: "ReadRefused",
        });
        expect(JSON.stringify(held)).not.toContain(TEST_API_KEY);
      }
      // Read again on the hold backoff, and nothing but reads meanwhile.
      await eventually(async () => {
        const reads = await op.admin.requests({ since, endpoint: "getNas" });
        return reads.filter((r) => r.httpStatus === 400).length >= 2 || undefined;
      }, 10_000);
      const writes = (await op.admin.requests({ since })).filter((r) => r.method !== "GET");
      expect(writes.map((w) => `${w.method} ${w.path}`)).toEqual([]);
      const during = await op.admin.state();
      expect(during.nas.map((n) => [n.id, n.quota])).toEqual(
        before.nas.map((n) => [n.id, n.quota]),
      );
      expect(during.tasks.map((t) => [t.id, t.desc])).toEqual(
        before.tasks.map((t) => [t.id, t.desc]),
      );

      await op.admin.clearFaults();
      await nas.waitForCondition("vol", "Synced", "True", undefined, 15_000);
      await jobs.waitForCondition("job", "Synced", "True", undefined, 15_000);
      await eventually(async () => {
        const after = await op.admin.state();
        const n = after.nas.find((x) => x.name === "vol");
        const t = after.tasks.find((x) => x.name === "job");
        return (n?.quota === "200" && t?.desc === "changed while refused") || undefined;
      }, 15_000);
      const after = await op.admin.state();
      expect(after.nas.map((n) => n.id)).toEqual(before.nas.map((n) => n.id));
      expect(after.tasks.map((t) => t.id)).toEqual(before.tasks.map((t) => t.id));
      expect(await op.admin.requests({ since, endpoint: "scaleNas" })).toHaveLength(1);
    } finally {
      await op.stop();
    }
  });
});

describe("a corrected API key file", () => {
  const kc = adminKubeConfig();
  let emulator: RunningEmulator;
  let dir = "";

  beforeAll(async () => {
    await installCrds(kc);
    emulator = await startEmulator({
      apiKey: TEST_API_KEY,
      subscriptionDelayMs: 200,
      missingOperations: ["listPods"],
    });
    dir = await mkdtemp(join(tmpdir(), "aidc-key-"));
  });
  afterAll(async () => {
    await emulator?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("is noticed within service.apiKeyRefreshMs and lifts the hold of the objects a wrong key stopped; operation verdicts show in the metrics", async () => {
    const namespace = await createNamespace(kc, "key-file");
    const keyFile = join(dir, "api-key");
    await writeFile(keyFile, TEST_API_KEY);
    const configFile = join(dir, "config.json");
    // A hold backoff far beyond the test: only the key change can bring objects back.
    await writeFile(
      configFile,
      JSON.stringify({
        service: {
          baseUrl: emulator.url,
          allowInsecureHttp: true,
          apiKeyFile: keyFile,
          apiKeyRefreshMs: 1_000,
          rateLimit: null,
        },
        watchNamespaces: [namespace],
        pollIntervalMs: { default: 500 },
        holdBackoff: { baseMs: 120_000, maxMs: 120_000 },
        resyncPeriodMs: 0,
        server: { port: 0, host: "127.0.0.1" },
        log: { level: "silent" },
      }),
    );
    const op = await runInProcess(configFile, { controllerFactories: [nasVolumeController] });
    try {
      // The start-up probes of the assumed operations show in the metrics.
      const metrics = op.metrics;
      const gauge = await eventually(async () => {
        const text = await metrics();
        return /aidc_service_operation_available\{operation="listPods"\} 0/.test(text)
          ? text
          : undefined;
      });
      expect(gauge).toMatch(/aidc_service_operation_available\{operation="listNas"\} 1/);
      expect(gauge).toMatch(/aidc_service_operation_available\{operation="deleteNas"\} -2/);
      const nas = new ObjectsOf(new KubeClient(kc), nasVolumeCrd, namespace);
      await nas.create("keyed", NAS_SPEC);
      await nas.waitForCondition("keyed", "Ready", "True");

      await writeFile(keyFile, "a-wrong-key-written-by-mistake");
      await nas.waitForCondition("keyed", "Synced", "False", "ApiKeyRefused");
      const admin = new EmulatorAdmin(emulator.url);
      expect((await admin.requests()).some((r) => !r.authorized)).toBe(true);

      await writeFile(keyFile, TEST_API_KEY);
      const corrected = Date.now();
      await nas.waitForCondition("keyed", "Ready", "True", undefined, 10_000);
      expect(conditionOf(await nas.get("keyed"), "Synced")?.status).toBe("True");
      // One refresh interval (1 s) plus a reconcile; the hold backoff is 2 min.
      expect(Date.now() - corrected).toBeLessThan(6_000);
    } finally {
      expect(await op.stop()).toBe(0);
    }
  });
});
