/**
 * The chaos run under a mutating admission webhook (test/chaos/admission.ts): every object
 * that creates is under one, which strips the operator's records from every write, its
 * finalizer, the records from a seeded half of the writes, or stamps labels; two operator
 * replicas under leader election whose leader is killed right after the emulator answered
 * creates, with injected 500s and creates that act and then fail. Held objects send no
 * create; every other one ends Ready with exactly one remote resource. The second case
 * puts every object under `strip-some` (the records stripped from a seeded half of the
 * writes): how soon each binds depends on timing, so it checks what holds in every
 * timing: each ends Ready with one resource or waits at WriteNotKept with at most one,
 * a deleted one is gone (its resource per its policy) or still waits, and no create is
 * sent before a write of its marker was kept or with the token of one never kept.
 */
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { type BenchEnvironment, startEnvironment } from "../bench/environment.js";
import { runChaos } from "../chaos/scenario.js";
import { installCrds } from "../support/crds.js";
import { adminKubeConfig, createNamespace } from "../support/kube.js";

/**
 * What both cases share: three Lease losses right after the emulator answered the 1st,
 * 2nd and 4th create (two kills, one cut), 10% injected 500s, 30% acting create failures.
 */
const CHAOS = {
  cciInstances: 0,
  secondAccountShare: 0,
  webhookShare: 1,
  kills: 3,
  killAfterCreates: [1, 2, 4],
  replicas: 2,
  killDelayMs: [0, 0] as [number, number],
  errorRate: 0.1,
  createErrorRate: 0.3,
  visibilityWindowMs: 3_000,
  reconcileTimeoutMs: 10_000,
  latency: { rate: 0.2, ms: 50 },
  restartApiServer: false,
  settleTimeoutMs: 40_000,
  pollIntervalMs: 1000,
  progress: () => undefined,
};

describe("the operator under SIGKILL behind a mutating webhook", () => {
  let env: BenchEnvironment;
  let namespace = "";
  const kc = adminKubeConfig();

  beforeAll(async () => {
    await installCrds(kc);
    namespace = await createNamespace(kc, "chaos-admission");
    env = await startEnvironment(
      { subscriptionDelayMs: 300, randomSeed: 7 },
      inject("kubeconfigPath"),
    );
  });
  afterAll(async () => {
    await env?.stop();
  });

  it("creates no resource for a held object and exactly one for every other, across kills", async () => {
    const report = await runChaos(env, {
      ...CHAOS,
      namespace,
      prefix: "adm",
      nas: 5,
      jobs: 2,
      fileSystems: 0,
      blockVolumes: 0,
      templates: 2,
      deleteShare: 0.2,
      webhookModes: ["strip-marker", "strip-finalizer", "stamp"],
      seed: 11,
      logFile: join(await mkdtemp(join(tmpdir(), "aidc-chaos-adm-")), "operator.log"),
    });
    expect(report.violations).toEqual([]);
    // Seed 11: each mode drawn; the held objects that were not deleted wait at WriteNotKept.
    expect(report.admission?.planned).toEqual({
      "strip-marker": 3,
      "strip-finalizer": 2,
      "strip-some": 0,
      stamp: 4,
    });
    expect(report.admission?.heldAtWriteNotKept).toBe(4);
    expect(report.admission?.createsOfHeld).toEqual([]);
    expect(report.admission?.webhook.stripped).toBeGreaterThan(0);
    expect(report.admission?.webhook.stamped).toBeGreaterThan(0);
    expect(report.apiKeyInLogLines + report.apiKeyInEvents).toBe(0);
    // Three Lease losses after creates were answered: two kills, one cut.
    expect(report.handovers).toMatchObject({ killed: 2, leaseLost: 1, notExited: 0 });
  });

  it("under a webhook that strips some writes, makes at most one resource per object and leaks none, across kills", async () => {
    const report = await runChaos(env, {
      ...CHAOS,
      namespace: await createNamespace(kc, "chaos-strip"),
      prefix: "ads",
      nas: 4,
      jobs: 2,
      fileSystems: 2,
      blockVolumes: 2,
      templates: 2,
      deleteShare: 0.3,
      webhookModes: ["strip-some"],
      seed: 5,
      // A held object is tried again within seconds: its writes go on during the kills,
      // and an object waiting at WriteNotKept has 8 s of the settle to bind.
      holdBackoff: { baseMs: 1000, maxMs: 4000 },
      waitingGraceMs: 8_000,
      logFile: join(await mkdtemp(join(tmpdir(), "aidc-chaos-ads-")), "operator.log"),
    });
    expect(report.violations).toEqual([]);
    const planned = report.admission?.planned["strip-some"] ?? 0;
    expect(planned).toBe(12);
    // Which objects bind and which wait depends on timing; every live one is one of them.
    const { ready = 0, waiting = [] } = report.admission?.stripSome ?? {};
    expect(ready + waiting.length).toBeGreaterThanOrEqual(planned - report.deletes.requested);
    expect(report.admission?.markerWrites.stripped).toBeGreaterThan(0);
    expect(report.admission?.markerWrites.kept).toBeGreaterThan(0);
    expect(report.apiKeyInLogLines + report.apiKeyInEvents).toBe(0);
    expect(report.handovers).toMatchObject({ killed: 2, leaseLost: 1, notExited: 0 });
  });
});
