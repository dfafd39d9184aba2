import { join } from "node:path";
import * as k8s from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LocalControlPlane } from "../../src/controlplane/controlplane.js";
import { allCrds } from "../../src/crds/index.js";
import { fewSeats } from "../support/flow-control.js";
import { kubeRequest } from "../support/http.js";
import { createNamespace, eventually } from "../support/kube.js";
import {
  adminAccess,
  type NetworkOperator,
  type NetworkTestBed,
  READY_MS,
  startNetworkOperator,
  startNetworkTestBed,
  UserNasVolumes,
  writeKubeconfig,
} from "../support/network-operator.js";
import { tokenAccount } from "../support/service-account-tokens.js";
import { TcpProxy } from "../support/tcp-proxy.js";

/** What a test does while the operator runs, with the NasVolumes of its namespace. */
type During = (nas: UserNasVolumes, op: NetworkOperator, tcp: TcpProxy) => Promise<void>;

/**
 * The operator against kube-apiservers run with the flags of production clusters, one
 * set at a time on a control plane of its own (the API server restarted with each, and
 * a second one on its etcd for the highly available case). The operator reaches one
 * through a TCP proxy that counts its connections; in each setup a
 * NasVolume made before and one after what the flags cause become Ready, each with one
 * NAS in the emulator, and the operator keeps the Lease and exits 0.
 */
describe("the operator against API servers run with production flags", () => {
  let plane: LocalControlPlane;
  let kc: k8s.KubeConfig;
  let bed: NetworkTestBed;

  beforeAll(async () => {
    plane = await new LocalControlPlane().start();
    kc = new k8s.KubeConfig();
    kc.loadFromFile(plane.kubeconfigPath);
    bed = await startNetworkTestBed(kc);
  }, 180_000);

  afterAll(async () => {
    await bed?.stop();
    await plane?.stop();
  });

  /** Restarts the API server with `flags`; resolves once every kind lists. */
  async function restartWith(flags: string[]): Promise<void> {
    await plane.stopApiServer();
    await plane.startApiServer(flags);
    // A restarted API server answers 429 for a custom resource until its storage is ready.
    for (const crd of allCrds) {
      const path = `/apis/${crd.group}/${crd.version}/${crd.plural}?limit=1`;
      await eventually(async () => (await kubeRequest(kc, "GET", path)).status === 200, 60_000);
    }
  }

  /** The requests the API server answered 429 since it started (its /metrics). */
  async function answered429(): Promise<number> {
    const metrics = await kubeRequest(kc, "GET", "/metrics");
    return metrics.body
      .split("\n")
      .filter((l) => l.startsWith("apiserver_request_total{") && l.includes('code="429"'))
      .reduce((sum, l) => sum + Number(l.split(" ").pop()), 0);
  }

  /**
   * Leader election on a Lease that outlasts a restart of the API server (else the
   * leader steps down and exits, as client-go's do).
   */
  const outlastingLease = (leaseName: string) => ({
    leaderElection: {
      enabled: true,
      leaseName,
      leaseNamespace: "default",
      leaseDurationMs: 60_000,
      renewDeadlineMs: 40_000,
      retryPeriodMs: 2_000,
    },
  });

  /** The NAS of that name in the emulator. */
  const remotes = (name: string) =>
    [...bed.emulator.state.nas.values()].filter((n) => n.name === name).length;

  /**
   * Runs the operator (as the admin, or with `token`) through a counting TCP proxy to
   * the API server restarted with `flags` (or to the one on `port`): `<prefix>first` Ready, then `during`, then
   * `<prefix>last` Ready; each with one NAS; the operator still running, then exit 0.
   */
  async function scenario(
    prefix: string,
    flags: string[],
    during: During,
    more: {
      config?: Record<string, unknown>;
      token?: string;
      port?: number;
      lease?: Record<string, number>;
    } = {},
  ): Promise<void> {
    await restartWith(flags);
    const namespace = await createNamespace(kc, prefix);
    const tcp = new TcpProxy(more.port ?? plane.apiServerPort);
    const port = await tcp.start();
    const access = adminAccess(kc);
    const kubeconfig = await writeKubeconfig(
      join(bed.dir, prefix),
      {
        [prefix]: {
          ...(more.token ? { ca: access.ca, token: more.token } : access),
          server: `https://127.0.0.1:${port}`,
        },
      },
      prefix,
    );
    const op = await startNetworkOperator({
      emulatorUrl: bed.emulator.url,
      namespaces: [namespace],
      kubeconfig,
      config: {
        leaderElection: {
          enabled: true,
          leaseName: prefix,
          leaseNamespace: namespace,
          ...more.lease,
        },
        ...more.config,
      },
    });
    const nas = new UserNasVolumes(kc, namespace);
    let code: number | string = "not stopped";
    try {
      await nas.create(`${prefix}first`);
      await nas.waitReady(`${prefix}first`, READY_MS, op);
      await during(nas, op, tcp);
      await nas.create(`${prefix}last`);
      await nas.waitReady(`${prefix}last`, READY_MS, op);
      expect(op.manager()?.running).toBe(true);
    } finally {
      code = await op.stop();
      await tcp.stop();
    }
    expect(code, op.logTail()).toBe(0);
    expect([remotes(`${prefix}first`), remotes(`${prefix}last`)]).toEqual([1, 1]);
  }

  it("makes bursts of NasVolumes Ready within 30 s, one NAS each, on a server that sends GOAWAY to 1 request in 50 (--goaway-chance=0.02)", async () => {
    await scenario("goaway", ["--goaway-chance=0.02"], async (nas, op, tcp) => {
      // Bursts of 10 (about 70 requests each) until a GOAWAY moved the operator to a
      // new connection, at least 2, at most 5.
      for (let burst = 0; burst < 5 && (burst < 2 || tcp.accepted === 1); burst++) {
        const names = Array.from({ length: 10 }, (_, i) => `goaway${burst}n${i}`);
        for (const name of names) await nas.create(name);
        // Within half the reconcile timeout: a request held after a GOAWAY stalls its
        // reconcile until that timeout (60 s).
        const started = Date.now();
        for (const name of names) {
          await nas.waitReady(name, 30_000 - (Date.now() - started), op);
        }
        expect(names.map(remotes)).toEqual(names.map(() => 1));
      }
      expect(tcp.accepted).toBeGreaterThan(1);
    });
  }, 240_000);

  it("resumes every watch at once, unlogged, when all its connections are cut together (2 streams per connection: watches on several)", async () => {
    // At debug, where each informer logs its failures (the cache's report sums them up).
    const debug = { config: { log: { level: "debug" } } };
    await scenario(
      "cutall",
      ["--http2-max-streams-per-connection=2"],
      async (_nas, op, tcp) => {
        const failed = () =>
          op
            .logTail(Number.MAX_SAFE_INTEGER)
            .split("\n")
            .filter((l) => l.includes("list/watch failed"));
        // Watches over a second old: one cut sooner without events counts as a failure
        // (informer.ts: a server that accepts and drops watches must not make it spin).
        await new Promise((r) => setTimeout(r, 2_000));
        const before = failed().length;
        expect(tcp.open).toBeGreaterThan(1);
        // As a proxy or NAT in between restarting: every connection closed at once. A
        // watch resumed on a connection whose close undici has yet to read went out again.
        tcp.block();
        tcp.unblock();
        await new Promise((r) => setTimeout(r, 3_000));
        expect(failed().slice(before)).toEqual([]);
      },
      debug,
    );
  }, 240_000);

  it("keeps its one connection while the quiet watches of a server without watch cache (no bookmarks) restart", async () => {
    const watchdogMs = 3_000;
    await scenario(
      "nocache",
      ["--watch-cache=false"],
      async (_nas, op, tcp) => {
        const connections = tcp.accepted;
        const restarts = () =>
          op
            .logTail(Number.MAX_SAFE_INTEGER)
            .split("\n")
            .filter((l) => l.includes("watch silent; listing again")).length;
        const before = restarts();
        await new Promise((r) => setTimeout(r, 6 * watchdogMs));
        // The watchdog restarted the quiet watches; each new watch was answered on the
        // connection, so it was kept.
        expect(restarts() - before).toBeGreaterThanOrEqual(3);
        expect(tcp.accepted).toBe(connections);
      },
      { config: { kube: { watchdogMs } } },
    );
  }, 240_000);

  it("creates a NAS once when the API server restarts under its create, and relists after etcd compacted its watches' history", async () => {
    // Short server-side timeouts too, as some managed clusters set them.
    const flags = ["--min-request-timeout=5", "--request-timeout=5s"];
    await scenario(
      "restart",
      flags,
      async (nas, op) => {
        await nas.create("restartflight");
        const created = () =>
          bed.emulator.requestLog
            .read({ endpoint: "subscribeNas" })
            .some((e) => JSON.stringify(e.body).includes('"name":"restartflight"'));
        await eventually(async () => created(), 30_000, 20);
        // Down before the create's outcome is written; etcd moves on and compacts
        // meanwhile, so the operator's watches resume from a revision that is gone.
        await plane.stopApiServer();
        const etcd = `http://127.0.0.1:${plane.etcdPort}/v3/kv`;
        let revision = 0;
        for (let i = 0; i < 3; i++) {
          const put = await fetch(`${etcd}/put`, {
            method: "POST",
            body: JSON.stringify({ key: btoa("/aidc-test/moved"), value: btoa(String(i)) }),
          });
          revision = Number(
            ((await put.json()) as { header: { revision: string } }).header.revision,
          );
        }
        const compacted = await fetch(`${etcd}/compaction`, {
          method: "POST",
          body: JSON.stringify({ revision, physical: true }),
        });
        expect(compacted.status).toBe(200);
        await plane.startApiServer(flags);
        await nas.waitReady("restartflight", READY_MS, op);
        expect(remotes("restartflight")).toBe(1);
        // The informers may still be backing off (up to 30 s) from the failures while down.
        const relisted = () =>
          op.logTail(Number.MAX_SAFE_INTEGER).includes("watch answered 410 Gone; relisting");
        await eventually(async () => relisted(), 45_000);
      },
      { config: outlastingLease("restart") },
    );
  }, 240_000);

  it("reconciles what was applied through the other API server of two while its own was down", async () => {
    const second = { server: await plane.startSecondApiServer() };
    const nasOf = (name: string) =>
      [...bed.emulator.state.nas.values()].find((n) => n.name === name);
    try {
      await scenario(
        "ha",
        [],
        async (nas, op, tcp) => {
          await nas.create("hagrown");
          await nas.waitReady("hagrown", READY_MS, op);
          await second.server.stop();
          // Through the API server still up: one made, one grown.
          await nas.create("haduring");
          const { group, version, plural, namespace } = nas.where;
          const grown = await kubeRequest(
            kc,
            "PATCH",
            `/apis/${group}/${version}/namespaces/${namespace}/${plural}/hagrown`,
            { body: { spec: { capacityGB: 200 } }, contentType: "application/merge-patch+json" },
          );
          expect(grown.status).toBe(200);
          second.server = await plane.startSecondApiServer([], second.server.port);
          await nas.waitReady("haduring", READY_MS, op);
          await eventually(async () => nasOf("hagrown")?.quotaGB === 200, READY_MS);
          expect([remotes("haduring"), remotes("hagrown")]).toEqual([1, 1]);
          // It came back over a new connection to its own API server.
          expect(tcp.accepted).toBeGreaterThan(1);
        },
        { port: second.server.port, config: outlastingLease("ha") },
      );
    } finally {
      await second.server.stop();
    }
  }, 240_000);

  /**
   * As a service account (system:masters is exempt from the server's limits), with
   * `limit` set up for it: 15 NasVolumes made at once are Ready with one NAS each, and
   * the server answered 429 meanwhile.
   */
  async function burstAsAccount(
    prefix: string,
    flags: string[],
    limit?: (account: { name: string; namespace: string }) => Promise<{ remove(): Promise<void> }>,
  ): Promise<void> {
    const namespace = await createNamespace(kc, `${prefix}-account`);
    const account = await tokenAccount(kc, namespace);
    const token = await account.mint("operator-token");
    const limited = await limit?.({ name: "aidc-operator", namespace });
    try {
      await scenario(
        prefix,
        flags,
        async (nas, op) => {
          const names = Array.from({ length: 15 }, (_, i) => `${prefix}${i}`);
          await Promise.all(names.map((name) => nas.create(name)));
          for (const name of names) await nas.waitReady(name, READY_MS, op);
          expect(names.map(remotes)).toEqual(names.map(() => 1));
          expect(await answered429()).toBeGreaterThan(0);
        },
        // The account's seats serve its Lease renewals too: under the burst's 429s on a
        // loaded machine a renewal can wait past the default 10 s renew deadline, and the
        // operator (as client-go's elector would) gives up leading. The burst is the test.
        { token, lease: { leaseDurationMs: 60_000, renewDeadlineMs: 40_000 } },
      );
    } finally {
      await limited?.remove();
      await account.cleanup();
    }
  }

  it("makes a burst Ready, one NAS each, on a server of 1 request in flight (429 with Retry-After)", async () => {
    await burstAsAccount("inflight", [
      "--enable-priority-and-fairness=false",
      "--max-requests-inflight=1",
      "--max-mutating-requests-inflight=1",
    ]);
  }, 240_000);

  it("makes a burst Ready, one NAS each, when priority and fairness gives it 1 seat and rejects the rest (429, Retry-After growing)", async () => {
    // Its retries spread out: sent back together, all but one would be refused again.
    await burstAsAccount(
      "apf",
      ["--max-requests-inflight=2", "--max-mutating-requests-inflight=1"],
      (account) => fewSeats(kc, account),
    );
  }, 240_000);
});
