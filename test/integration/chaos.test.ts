/**
 * The short, deterministic version of `npm run chaos`: a few objects, two operator
 * replicas under leader election whose leader is SIGKILLed, cut from the API server or
 * paused past its Lease (the Lease losses) at fixed points of the create protocol
 * (right after the emulator answered the 1st, 3rd, 5th and 7th create call), 20% injected 500s, creates and deletes
 * that take effect and then answer 500 (a repeated delete refused with 409), latency,
 * 30% of the objects deleted between the kills (under Delete or Orphan) and 30% of
 * those that can on a second account, all from a fixed seed. The API server is shared by the integration run, so it is not
 * restarted here; the script does that.
 */
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { applySeed } from "../../src/emulator/seeding.js";
import { type BenchEnvironment, startEnvironment } from "../bench/environment.js";
import { FS, NAS } from "../bench/workload.js";
import { checkImages } from "../chaos/cci.js";
import { checkInvariants, checkOneActor } from "../chaos/checks.js";
import { checkDeletes, RemoteCensus } from "../chaos/deletes.js";
import { type ChaosReport, runChaos } from "../chaos/scenario.js";
import { repeatedCreate } from "../chaos/user-resolution.js";
import { installCrds } from "../support/crds.js";
import { adminKubeConfig, createNamespace } from "../support/kube.js";

describe("the operator under SIGKILL at fixed points of the create protocol", () => {
  let env: BenchEnvironment;
  let namespace = "";
  let report: ChaosReport;
  const deleted = () => new Set(report.deletes.planned.map((d) => `${d.kind}/${d.name}`));

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
    report = await runChaos(env, {
      namespace,
      prefix: "det",
      nas: 5,
      jobs: 2,
      fileSystems: 2,
      blockVolumes: 2,
      templates: 2,
      cciInstances: 1,
      deleteShare: 0.3,
      secondAccountShare: 0.3,
      seed: 42,
      kills: 4,
      killAfterCreates: [1, 3, 5, 7],
      replicas: 2,
      pauseLeader: true,
      repeatDeleteStatus: 409,
      killDelayMs: [0, 0],
      errorRate: 0.2,
      createErrorRate: 0.3,
      visibilityWindowMs: 3_000,
      // A create a kill left is looked up 10 s + service.timeoutMs after its marker, then
      // for the window: within the settle time.
      reconcileTimeoutMs: 10_000,
      latency: { rate: 0.3, ms: 100 },
      restartApiServer: false,
      settleTimeoutMs: 40_000,
      pollIntervalMs: 1000,
      logFile: join(await mkdtemp(join(tmpdir(), "aidc-chaos-test-")), "operator.log"),
      progress: () => undefined,
    });
    expect(report.violations).toEqual([]);
    expect(Object.values(report.remoteCounts.nas)).toEqual([1, 1]);
    expect(Object.values(report.remoteCounts.tasks)).toEqual([1]);
    expect(Object.values(report.remoteCounts.fileSystems)).toEqual([1, 1]);
    expect(Object.values(report.remoteCounts.mounts)).toEqual([1, 1]);
    expect(Object.values(report.remoteCounts.volumes)).toEqual([1, 1]);
    expect(Object.values(report.remoteCounts.attached)).toEqual([1, 1]);
    expect(Object.values(report.remoteCounts.templates)).toEqual([1]);
    expect(report.ready).toBe(8);
    // Seed 42 deletes 5 objects: a NasVolume, a TrainingJob and a TrainingTemplate under
    // Delete, two NasVolumes under Orphan (deletes.ts checks each).
    expect(report.deletes).toMatchObject({ requested: 5, withDelete: 3, kept: 2 });
    // Seed 42 moves two NasVolumes and a TrainingJob to the second account.
    expect(report.onSecondAccount).toEqual([
      "NasVolume/det-nas-0",
      "TrainingJob/det-job-0",
      "NasVolume/det-nas-1",
    ]);
    // Each image of the CciInstance saved once, or its lost answer reported as such.
    expect(report.images.saved + report.images.outcomeUnknown).toBe(2);
    expect(report.createOutcomeUnknown).toEqual([]);
    expect(report.apiKeyInLogLines + report.apiKeyInEvents).toBe(0);
    expect(report.logLines).toBeGreaterThan(0);
    // The kills really happened after creates were answered, and faults were injected.
    expect(report.createCalls).toBeGreaterThanOrEqual(5);
    expect(report.faultsInjected).toBeGreaterThan(0);
    // Creates took effect and answered 500 (the first of each kind always does); each
    // was found by its client token, none sent again.
    expect(report.actingCreateFailures).toBeGreaterThanOrEqual(2);
    // So did deletes (the first of each kind), and the objects went all the same. A
    // delete is sent only when its object's create reached the service before the
    // delete, which the kills' timing decides: so only when one was sent.
    const deletes = env.emulator.requestLog.read({ method: "DELETE" });
    if (deletes.length > 0) expect(deletes.some((e) => e.acted)).toBe(true);
    // A resource that exists is always found by the operator itself; only a create that
    // never reached the service (a kill right before it) may be left to the user, who
    // creates again after CreateOutcomeUnknown (counted, not a violation).
    expect(report.userResolutions.adopted).toEqual([]);
    // The leader was killed, cut off, killed and paused; each one cut off or paused
    // exited; the service heard from them one leader at a time (a violation else).
    expect(report.handovers).toMatchObject({ killed: 2, leaseLost: 2, notExited: 0 });
    expect(Object.keys(report.handovers?.callsByProcess ?? {}).length).toBeGreaterThanOrEqual(2);
  });

  it("the checks name a second remote resource, a second mount, a detached volume, a stray one, one in the wrong account and a logged key", async () => {
    // After the run above: one more NAS under an object's name, one under no object's,
    // one in the default account of an object on the second, and a second mount.
    applySeed(env.emulator.state, {
      nas: [{ name: "det-nas-2" }, { name: "det-nas-99" }, { name: "det-nas-0" }],
    });
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
      templates: 2,
      apiKey: env.apiKey,
      logFile,
      deleted: deleted(),
      second: {
        state: env.emulator.tenants.get("second").state,
        objects: new Set(report.onSecondAccount),
      },
    });
    expect(findings.violations).toEqual([
      "det-nas-2: 2 remote resources (expected exactly 1)",
      "det-fs-0: 2 mounts (expected exactly 1)",
      "det-bv-1: not attached to cci-0002 (expected exactly 1 volume there)",
      expect.stringMatching(/^remote resource without an object: det-nas-99 /),
      expect.stringMatching(
        /^a resource in the wrong account: NasVolume\/det-nas-0: nas-\S+ in the default account$/,
      ),
      "the API key is in 1 log line(s)",
    ]);
    // r1 leads from 1000, r2 from 5000: r1's call at 5100 and r2's write before its term.
    const call = (instance: string, at: number, method = "GET") => ({
      instance,
      at,
      method,
      path: `/v1/x/${at}`,
    });
    const terms = [
      { instance: "r1", from: 1000 },
      { instance: "r2", from: 5000 },
    ];
    expect(checkOneActor([call("r1", 1200), call("r2", 1300), call("r2", 5050)], terms)).toEqual(
      [],
    );
    expect(
      checkOneActor([call("r1", 1200), call("r2", 1300, "POST"), call("r1", 5100)], terms),
    ).toEqual([
      "r1 made 1 service call(s) after r2 took the Lease, the last 100 ms later: GET /v1/x/5100",
      "r2 made 1 writing call(s) without the Lease: POST /v1/x/1300",
    ]);
    // A create repeated after a 500 that did nothing is no duplicate; after one that acted, it is.
    const subscribe = (name: string, status: number, acted?: boolean) =>
      env.emulator.requestLog.add({
        time: new Date().toISOString(),
        method: "POST",
        path: "/v1/nasStorage/subscribe",
        query: {},
        endpoint: "subscribeNas",
        body: { storageParams: { name } },
        authorized: true,
        status,
        ...(status === 200 ? {} : { fault: "error", acted: acted ?? false }),
      });
    subscribe("det-lost-1", 500);
    subscribe("det-lost-1", 200);
    subscribe("det-lost-10", 500, true);
    subscribe("det-lost-10", 200);
    expect(repeatedCreate(env.emulator, "NasVolume/det-lost-1")).toEqual({
      received:
        "NasVolume/det-lost-1: its creates reached the service 2 time(s), answered 500 (error), 200",
      duplicate: false,
    });
    expect(repeatedCreate(env.emulator, "NasVolume/det-lost-10")).toMatchObject({
      duplicate: true,
    });
  });

  it("the delete checks name a leaked resource, a kept one gone, a wrong delete call, an object left and an image saved twice", async () => {
    const { state } = env.emulator;
    const idOf = (name: string) => [...state.nas.values()].find((n) => n.name === name)?.id ?? "";
    // det-gone, deleted under Orphan: its NAS goes; det-nas-4 was deleted under Delete:
    // a NAS of its name comes back.
    applySeed(state, { nas: [{ name: "det-gone" }] });
    const census = new RemoteCensus(env.emulator);
    census.sample();
    const kept = idOf("det-gone");
    state.nas.delete(kept);
    applySeed(state, { nas: [{ name: "det-nas-4" }] });
    // A delete of det-fs-1's file system (never deleted), and det-fs-1 planned as deleted.
    const since = env.emulator.requestLog.lastSeq();
    const fs1 = [...state.fileSystems.byId.values()].find((f) => f.name === "det-fs-1")?.id;
    const path = `/v1/file-systems/${fs1}`;
    env.emulator.requestLog.add({
      time: new Date().toISOString(),
      method: "DELETE",
      path,
      query: {},
      endpoint: "deleteFileSystem",
      authorized: true,
    });
    const findings = await checkDeletes({
      kube: env.kube,
      emulator: env.emulator,
      namespace,
      resources: [NAS, FS],
      planned: [
        ...report.deletes.planned,
        { kind: FS.kind, name: "det-fs-1", remoteName: "det-fs-1", deletesRemote: false },
        { kind: NAS.kind, name: "det-gone", remoteName: "det-gone", deletesRemote: false },
      ],
      census,
      since,
    });
    expect(findings.violations).toEqual([
      "FileSystem/det-fs-1 was deleted but is still in the API",
      `deleted under deletionPolicy Delete, resource left: NasVolume/det-nas-4: ${idOf("det-nas-4")}`,
      `deleted without Delete, resource gone: NasVolume/det-gone: ${kept}`,
      `a delete call named a resource not to delete: deleteFileSystem ${path} (det-fs-1)`,
    ]);
    // Two more images of the same name and tag: saved twice (at least).
    const instance = state.cci.get("cci-det-0");
    if (!instance) throw new Error("cci-det-0 is not in the service");
    for (const imageId of ["img-x", "img-y"]) {
      instance.images.push({ imageId, imageName: "det-cci-0", tag: "a", savedAt: 0 });
    }
    const images = await checkImages({
      kube: env.kube,
      emulator: env.emulator,
      namespace,
      prefix: "det",
      count: 1,
      deleted: deleted(),
    });
    expect(images.violations).toContainEqual(
      expect.stringMatching(/^an image was saved twice: cci-det-0 det-cci-0:a x[23]$/),
    );
  });
});
