/**
 * A leader paused past its Lease (SIGSTOP: a frozen node, a long stop of the process)
 * while its reconciles have service calls under way, woken (SIGCONT) once another
 * candidate holds the Lease: it must log the loss and exit within its stop budget, and
 * record nothing of the reconciles the wake finds due: they are the new leader's now.
 */
import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { freePort } from "../../src/controlplane/controlplane.js";
import { type RunningEmulator, startEmulator } from "../../src/emulator/server.js";
import { KubeClient } from "../../src/runtime/kube.js";
import { LeaderElector } from "../../src/runtime/leader-election.js";
import { isReady } from "../bench/ready-tracker.js";
import { JOB, NAS, nasName, nasVolume, trainingJob } from "../bench/workload.js";
import { installCrds } from "../support/crds.js";
import { adminKubeConfig, createNamespace, eventually } from "../support/kube.js";
import { TEST_API_KEY } from "../support/operator.js";
import { type OperatorProcess, sleep, startOperatorProcess } from "../support/operator-process.js";

const LEASE = { leaseDurationMs: 4_000, renewDeadlineMs: 3_000, retryPeriodMs: 500 };
const SHUTDOWN_MS = 5_000;

describe("a leader paused past its Lease", () => {
  const admin = adminKubeConfig();
  const kube = new KubeClient(admin);
  let emulator: RunningEmulator;
  let namespace = "";
  let op: OperatorProcess | undefined;
  let successor: LeaderElector | undefined;

  beforeAll(async () => {
    await installCrds(admin);
    namespace = await createNamespace(admin, "paused");
    // Every service call takes 300 ms: some are always under way when the leader stops.
    emulator = await startEmulator({
      apiKey: TEST_API_KEY,
      subscriptionDelayMs: 300,
      faults: [{ kind: "latency", latencyMs: 300 }],
    });
  });
  afterAll(async () => {
    await op?.kill();
    await successor?.stop({ release: false });
    await emulator?.stop();
  });

  it("logs the loss and exits within its stop budget once woken, recording no failure (Event, Synced=False) of the reconciles it finds due", async () => {
    const dir = await mkdtemp(join(tmpdir(), "aidc-paused-leader-"));
    const config = join(dir, "config.json");
    const leaderElection = { enabled: true, leaseNamespace: namespace, leaseName: "paused" };
    await writeFile(
      config,
      JSON.stringify({
        leaderElection: { ...leaderElection, ...LEASE },
        shutdownTimeoutMs: SHUTDOWN_MS,
      }),
    );
    for (let i = 0; i < 4; i++) {
      await kube.create(NAS, nasVolume(namespace, "p", i));
      await kube.create(JOB, trainingJob(namespace, "p", i, false));
    }
    const logFile = join(dir, "operator.log");
    op = startOperatorProcess({
      kubeconfig: inject("kubeconfigPath"),
      serviceBaseUrl: emulator.url,
      apiKey: TEST_API_KEY,
      metricsPort: await freePort(),
      logFile,
      env: {
        POD_NAME: "paused-0",
        AIDC_CONFIG: config,
        AIDC_WATCH_NAMESPACES: namespace,
        AIDC_POLL_INTERVAL_MS: "500",
        AIDC_LOG_LEVEL: "debug",
      },
    });
    const log = () => readFile(logFile, "utf8").catch(() => "");
    await eventually(async () => (await log()).includes('"msg":"became the leader"'), 60_000);
    const all = async () => [
      ...(await kube.list(NAS, namespace)).items,
      ...(await kube.list(JOB, namespace)).items,
    ];
    await eventually(async () => (await all()).every(isReady), 90_000);

    op.child.kill("SIGSTOP");
    successor = new LeaderElector(kube, {
      ...leaderElection,
      ...LEASE,
      identity: "successor",
      log: pino({ level: "silent" }),
      onStartedLeading: () => undefined,
      onStoppedLeading: () => undefined,
    });
    successor.start();
    await eventually(async () => successor?.isLeader(), 20_000, 50);
    // Changes made meanwhile (by a user, or the new leader's writes) reach the paused
    // process's watches, which deliver them first thing once it wakes.
    for (let i = 0; i < 4; i++) {
      const key = { namespace, name: nasName("p", i) };
      await kube.patch(NAS, key, { spec: { capacityGB: 200 } });
    }
    await sleep(300);
    const before = (await log()).length;
    op.child.kill("SIGCONT");
    // Its stop budget, and a second for the process to end.
    const late = sleep(SHUTDOWN_MS + 1_000).then(() => "still running");
    expect(await Promise.race([op.exited, late])).toBe(1);

    const said = (await log())
      .slice(before)
      .split("\n")
      .filter((l) => l.startsWith("{"))
      .map((l) => (JSON.parse(l) as { msg: string }).msg);
    expect(said).toContain("could not renew the lease in time; leadership lost");
    expect(said).not.toContain("became the leader");
    // The calls it found due were stopped unsent; their reconciles ended as aborted.
    expect(said).not.toContain("reconcile failed; will retry");
    expect(said).not.toContain("error policy failed; the retry records it");
    for (const path of ["/apis/events.k8s.io/v1", "/api/v1"]) {
      const events = (await kube.request("GET", `${path}/namespaces/${namespace}/events`)) as {
        items?: unknown[];
      };
      const abandoned = (events.items ?? []).filter((e) => JSON.stringify(e).includes("abandoned"));
      expect(abandoned).toEqual([]);
    }
    for (const obj of await all()) expect(JSON.stringify(obj.status)).not.toContain("abandoned");
  }, 120_000);
});
