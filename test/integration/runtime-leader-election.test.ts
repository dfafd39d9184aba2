import * as k8s from "@kubernetes/client-node";
import { pino } from "pino";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { controller, type Reconciler } from "../../src/runtime/controller.js";
import { LEASES, LeaseFence } from "../../src/runtime/leader-election.js";
import { Manager } from "../../src/runtime/manager.js";
import { adminKubeConfig, createNamespace, eventually } from "../support/kube.js";
import { TcpProxy } from "../support/tcp-proxy.js";
import { GIZMOS, gizmo, installGizmoCrd } from "../support/test-crd.js";

const LEASE_MS = 4_000;
const RENEW_MS = 3_000;
const RETRY_MS = 500;

describe("leader election between managers", () => {
  const kc = adminKubeConfig();
  let namespace = "";
  const managers: Manager[] = [];
  const proxies: TcpProxy[] = [];

  beforeAll(async () => {
    await installGizmoCrd(kc);
    namespace = await createNamespace(kc, "leader");
    const custom = kc.makeApiClient(k8s.CustomObjectsApi);
    for (const name of ["one", "two"]) {
      await custom.createNamespacedCustomObject({
        ...GIZMOS,
        namespace,
        body: gizmo(namespace, name),
      });
    }
  });

  afterEach(async () => {
    await Promise.all(managers.splice(0).map((m) => m.stop()));
    await Promise.all(proxies.splice(0).map((p) => p.stop()));
  });

  afterAll(async () => {
    await Promise.all(managers.map((m) => m.stop()));
  });

  /**
   * A manager whose only controller records what it reconciled, and the keys its error
   * policy was asked about; with `hang`, a reconcile runs until it is aborted, and records
   * `aborted: <name>` then; `reconcile` replaces the recording one.
   */
  async function startManager(
    identity: string,
    leaseName: string,
    config = kc,
    {
      hang = false,
      shutdownTimeoutMs = 2_000,
      fence,
      reconcile,
    }: {
      hang?: boolean;
      shutdownTimeoutMs?: number;
      fence?: LeaseFence;
      reconcile?: Reconciler;
    } = {},
  ) {
    const reconciled: string[] = [];
    const failed: string[] = [];
    const manager = new Manager({
      kubeConfig: config,
      log: pino({ level: "silent" }),
      namespaces: [namespace],
      server: { port: 0, host: "127.0.0.1" },
      resyncPeriodMs: 0,
      shutdownTimeoutMs,
      ...(fence ? { fence } : {}),
      leaderElection: {
        leaseName,
        leaseNamespace: namespace,
        identity,
        leaseDurationMs: LEASE_MS,
        renewDeadlineMs: RENEW_MS,
        retryPeriodMs: RETRY_MS,
      },
    });
    manager.add(
      controller("gizmos")
        .for(GIZMOS)
        .onError((key) => {
          failed.push(key.name);
        })
        .reconcile(
          reconcile ??
            (async (key, ctx) => {
              reconciled.push(key.name);
              if (hang) {
                await new Promise((resolve) => ctx.signal.addEventListener("abort", resolve));
                reconciled.push(`aborted: ${key.name}`);
              }
              return {};
            }),
        ),
    );
    await manager.start();
    managers.push(manager);
    return { manager, reconciled, failed };
  }

  const holder = async (leaseName: string) => {
    const lease = await managers[0]?.kube.get(LEASES, { namespace, name: leaseName });
    return (lease?.spec as { holderIdentity?: string } | undefined)?.holderIdentity;
  };

  const ready = async (m: Manager) =>
    (await fetch(`http://127.0.0.1:${m.port}/readyz`)).status === 200;

  it("elects exactly one leader, and only the leader reconciles; both are ready", async () => {
    const a = await startManager("a", "exactly-one");
    const b = await startManager("b", "exactly-one");
    await eventually(async () => a.manager.isLeader() || b.manager.isLeader());
    // Several retry periods later there is still exactly one.
    await new Promise((r) => setTimeout(r, 3 * RETRY_MS));
    expect([a, b].filter((m) => m.manager.isLeader())).toHaveLength(1);
    const [leader, follower] = a.manager.isLeader() ? [a, b] : [b, a];
    expect(await holder("exactly-one")).toBe(leader.manager.identity);
    await eventually(async () => leader.reconciled.length === 2);
    expect(leader.reconciled.sort()).toEqual(["one", "two"]);
    expect(follower.reconciled).toEqual([]);
    await eventually(async () => (await ready(a.manager)) && (await ready(b.manager)));
    const metrics = await (await fetch(`http://127.0.0.1:${leader.manager.port}/metrics`)).text();
    expect(metrics).toContain('leader_election_master_status{name="exactly-one"} 1');
    expect(metrics).toContain(
      'controller_runtime_reconcile_total{controller="gizmos",result="success"} 2',
    );
  });

  it("lets the other take over within the lease duration when the leader dies without releasing", async () => {
    const a = await startManager("a", "killed");
    await eventually(async () => a.manager.isLeader());
    const b = await startManager("b", "killed");
    await new Promise((r) => setTimeout(r, 2 * RETRY_MS));
    expect(b.manager.isLeader()).toBe(false);
    const killedAt = Date.now();
    await a.manager.stop({ releaseLease: false });
    expect(await holder("killed")).toBe("a");
    await eventually(async () => b.manager.isLeader(), 3 * LEASE_MS, 50);
    const took = Date.now() - killedAt;
    // It waited for the lease to expire (not a release), and not much longer.
    expect(took).toBeGreaterThan(LEASE_MS - 2 * RETRY_MS);
    expect(took).toBeLessThan(LEASE_MS + 3 * RETRY_MS);
    await eventually(async () => b.reconciled.length === 2);
  });

  it("hands over at once when the leader shuts down gracefully", async () => {
    const a = await startManager("a", "graceful");
    await eventually(async () => a.manager.isLeader());
    const b = await startManager("b", "graceful");
    await new Promise((r) => setTimeout(r, 2 * RETRY_MS));
    const stoppedAt = Date.now();
    await a.manager.stop();
    expect(await holder("graceful")).toBeUndefined();
    await eventually(async () => b.manager.isLeader(), 3 * LEASE_MS, 50);
    expect(Date.now() - stoppedAt).toBeLessThan(2 * RETRY_MS + 500);
  });

  /** A kubeconfig whose API server is reached through a proxy the test can cut. */
  async function cuttable() {
    const tcp = new TcpProxy(Number(new URL(kc.getCurrentCluster()?.server ?? "").port));
    proxies.push(tcp);
    const port = await tcp.start();
    const cut = new k8s.KubeConfig();
    cut.loadFromString(kc.exportConfig());
    const cluster = cut.getCurrentCluster();
    if (!cluster) throw new Error("no cluster");
    cut.clusters = [{ ...cluster, server: `https://127.0.0.1:${port}` }];
    return { tcp, cut };
  }

  it("makes a leader that cannot renew step down after the renew deadline and fail its manager", async () => {
    const { tcp, cut } = await cuttable();
    const a = await startManager("a", "partitioned", cut);
    await eventually(async () => a.manager.isLeader());
    const b = await startManager("b", "partitioned");
    const failed = a.manager.done.then(
      () => "resolved",
      (err: Error) => err.message,
    );
    const cutAt = Date.now();
    tcp.block();
    await expect(failed).resolves.toMatch(/leadership lost/);
    expect(Date.now() - cutAt).toBeLessThan(RENEW_MS + 2 * RETRY_MS + 1_000);
    expect(a.manager.isLeader()).toBe(false);
    await eventually(async () => b.manager.isLeader(), 3 * LEASE_MS, 50);
  });

  it("aborts the reconciles in flight at once when leadership is lost, not after the drain: another leader may act", async () => {
    const { tcp, cut } = await cuttable();
    // A drain of about 12 s: far longer than the renew deadline.
    const a = await startManager("a", "lost-reconciling", cut, {
      hang: true,
      shutdownTimeoutMs: 20_000,
    });
    await eventually(async () => a.reconciled.length === 2);
    const failed = a.manager.done.then(
      () => "resolved",
      (err: Error) => err.message,
    );
    const cutAt = Date.now();
    tcp.block();
    await expect(failed).resolves.toMatch(/leadership lost/);
    expect(Date.now() - cutAt).toBeLessThan(RENEW_MS + 2 * RETRY_MS + 1_000);
    expect(a.reconciled.filter((r) => r.startsWith("aborted")).sort()).toEqual([
      "aborted: one",
      "aborted: two",
    ]);
  });

  it("ends a reconcile whose call finds the Lease lapsed (the process paused past its renew deadline, before its renew loop's timer) as aborted, not failed: no error policy writes Synced=False", async () => {
    const fence = new LeaseFence();
    const seen: string[] = [];
    let paused = false;
    const a = await startManager("a", "lapsed", kc, {
      fence,
      reconcile: async (key, ctx) => {
        if (key.name !== "one" || paused) return {};
        paused = true;
        // The thread stops past the renew deadline (a long GC pause, a frozen node):
        // every timer, the renew loop's too, fires only after this reconcile goes on.
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, RENEW_MS + 500);
        // What a service client asks before each send (run.ts gives it the fence).
        if (fence.mayAct()) return {};
        seen.push(`signal aborted: ${ctx.signal.aborted}`);
        throw new Error("stopped unsent: the Lease may have passed on");
      },
    });
    const lost = a.manager.done.then(
      () => "resolved",
      (err: Error) => err.message,
    );
    await expect(lost).resolves.toMatch(/leadership lost/);
    expect(seen).toEqual(["signal aborted: true"]);
    expect(a.failed).toEqual([]);
  });

  it("aborts the reconciles a graceful stop drains once leadership is lost meanwhile", async () => {
    const { tcp, cut } = await cuttable();
    const a = await startManager("a", "lost-stopping", cut, {
      hang: true,
      shutdownTimeoutMs: 20_000,
    });
    await eventually(async () => a.reconciled.length === 2);
    tcp.block();
    const stoppedAt = Date.now();
    await a.manager.stop();
    // Reconciles aborted when the lease was lost (a renew deadline), not at the drain's
    // end (~12 s); the release then waits at most a renew deadline for the last round.
    expect(Date.now() - stoppedAt).toBeLessThan(2 * RENEW_MS + 2 * RETRY_MS + 1_000);
    expect(a.reconciled.filter((r) => r.startsWith("aborted"))).toHaveLength(2);
  });
});
