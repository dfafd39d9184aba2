/**
 * The short, deterministic version of `npm run chaos`: a few objects, the operator
 * process SIGKILLed at fixed points of the create protocol (right after the emulator
 * answered the 1st, 3rd and 5th create call), 20% injected 500s, creates that take
 * effect and then answer 500, and latency from a fixed seed. The API server is shared by the integration run, so it is not restarted
 * here; the script does that.
 */
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { applySeed } from "../../src/emulator/seeding.js";
import { type BenchEnvironment, startEnvironment } from "../bench/environment.js";
import { checkInvariants } from "../chaos/checks.js";
import { runChaos } from "../chaos/scenario.js";
import { installCrds } from "../support/crds.js";
import { adminKubeConfig, createNamespace } from "../support/kube.js";

describe("the operator under SIGKILL at fixed points of the create protocol", () => {
  let env: BenchEnvironment;
  let namespace = "";

  beforeAll(async () => {
    const kc = adminKubeConfig();
    await installCrds(kc);
    namespace = await createNamespace(kc, "chaos");
    env = await startEnvironment(
      { subscriptionDelayMs: 300, randomSeed: 42 },
      inject("kubeconfigPath"),
    );
  });
  afterAll(async () => {
    await env?.stop();
  });

  it("creates exactly one remote resource per object, makes all Ready, and never logs the API key", async () => {
    const report = await runChaos(env, {
      namespace,
      prefix: "det",
      nas: 5,
      jobs: 2,
      fileSystems: 2,
      blockVolumes: 2,
      seed: 42,
      kills: 3,
      killAfterCreates: [1, 3, 5],
      killDelayMs: [0, 0],
      errorRate: 0.2,
      createErrorRate: 0.3,
      visibilityWindowMs: 3_000,
      latency: { rate: 0.3, ms: 100 },
      restartApiServer: false,
      settleTimeoutMs: 40_000,
      pollIntervalMs: 1000,
      logFile: join(await mkdtemp(join(tmpdir(), "aidc-chaos-test-")), "operator.log"),
      progress: () => undefined,
    });
    expect(report.violations).toEqual([]);
    expect(Object.values(report.remoteCounts.nas)).toEqual([1, 1, 1, 1, 1]);
    expect(Object.values(report.remoteCounts.tasks)).toEqual([1, 1]);
    expect(Object.values(report.remoteCounts.fileSystems)).toEqual([1, 1]);
    expect(Object.values(report.remoteCounts.mounts)).toEqual([1, 1]);
    expect(Object.values(report.remoteCounts.volumes)).toEqual([1, 1]);
    expect(Object.values(report.remoteCounts.attached)).toEqual([1, 1]);
    expect(report.ready).toBe(11);
    expect(report.createOutcomeUnknown).toEqual([]);
    expect(report.apiKeyInLogLines + report.apiKeyInEvents).toBe(0);
    expect(report.logLines).toBeGreaterThan(0);
    // The kills really happened after creates were answered, and faults were injected.
    expect(report.createCalls).toBeGreaterThanOrEqual(5);
    expect(report.faultsInjected).toBeGreaterThan(0);
    // Creates took effect and answered 500 (the first of each kind always does); each
    // was found by its client token, none sent again.
    expect(report.actingCreateFailures).toBeGreaterThanOrEqual(2);
    // A resource that exists is always found by the operator itself; only a create that
    // never reached the service (a kill right before it) may be left to the user, who
    // creates again after CreateOutcomeUnknown (counted, not a violation).
    expect(report.userResolutions.adopted).toEqual([]);
  });

  it("the checks name a second remote resource, a second mount, a detached volume, a stray one and a logged key", async () => {
    // After the run above: one more NAS under an object's name, one under no object's,
    // and a second mount of a file system.
    applySeed(env.emulator.state, { nas: [{ name: "det-nas-0" }, { name: "det-nas-99" }] });
    const fs0 = [...env.emulator.state.fileSystems.byId.values()].find(
      (f) => f.name === "det-fs-0",
    );
    if (!fs0) throw new Error("det-fs-0 is not in the service");
    env.emulator.state.fileSystems.addMount(
      fs0,
      { id: "mnt-extra", instanceId: "cci-0004", address: "x", status: "mounted", createdAt: 0 },
      0,
    );
    // A volume someone else detached.
    const bv1 = [...env.emulator.state.volumes.records.values()].find((v) => v.name === "det-bv-1");
    if (!bv1) throw new Error("det-bv-1 is not in the service");
    env.emulator.state.volumes.patch(bv1.id, { status: "available", instanceId: null });
    const logFile = join(await mkdtemp(join(tmpdir(), "aidc-chaos-test-")), "leak.log");
    await writeFile(logFile, `{"msg":"oops","key":"${env.apiKey}"}\n`);
    const findings = await checkInvariants({
      kube: env.kube,
      emulator: env.emulator,
      namespace,
      prefix: "det",
      nas: 5,
      jobs: 2,
      fileSystems: 2,
      blockVolumes: 2,
      apiKey: env.apiKey,
      logFile,
    });
    expect(findings.violations).toEqual([
      "det-nas-0: 2 remote resources (expected exactly 1)",
      "det-fs-0: 2 mounts (expected exactly 1)",
      "det-bv-1: not attached to cci-0002 (expected exactly 1 volume there)",
      expect.stringMatching(/^remote resource without an object: det-nas-99 /),
      "the API key is in 1 log line(s)",
    ]);
  });
});
