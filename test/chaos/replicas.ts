/**
 * Two operator replicas under leader election for the chaos run (`--replicas 2`). Each
 * process reaches the API server through a TCP proxy the run can cut and the service
 * through an HTTP proxy that records its calls, so that every service call is known by
 * the process that made it. A handover is either a SIGKILL of the leader or a Lease
 * loss: the leader's API server is cut (a partition), so it cannot renew, or the leader
 * is paused (SIGSTOP) until the other replica holds the Lease, then resumed (a long GC
 * pause, a frozen node); either way it must stop acting before the other replica takes
 * the Lease, and it then exits and is started again. A process paused while its winning
 * campaign round was under way never led: it stays a standby. A replica that exits by
 * itself (a Lease lost while the API server restarts) is started again, as its pod would be.
 * Each process's lines go to `replica-N.log` too, beside the run's log.
 * checks.ts's checkOneActor holds the recorded calls to one leader at a time.
 */
import { appendFileSync, readFileSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { request as httpRequest, createServer as httpServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import * as k8s from "@kubernetes/client-node";
import { freePort } from "../../src/controlplane/controlplane.js";
import { LEASES } from "../../src/runtime/leader-election.js";
import type { BenchEnvironment } from "../bench/environment.js";
import { type OperatorProcess, sleep } from "../support/operator-process.js";
import { TcpProxy } from "../support/tcp-proxy.js";
import type { LeaderTerm, ServiceCall } from "./checks.js";

/** Lease timings of the replicas (short, so that a handover takes seconds). */
export const REPLICA_LEASE = { leaseDurationMs: 4000, renewDeadlineMs: 3000, retryPeriodMs: 500 };

/**
 * An HTTP proxy to `target` that records each request of `instance` by when it was
 * sent: its arrival, or for the first request of a connection the connection's
 * acceptance (the process decided to send before it connected; paused meanwhile, the
 * request itself goes out only when it resumes).
 */
async function recordingProxy(
  target: URL,
  instance: string,
  calls: ServiceCall[],
): Promise<{ url: string; server: Server }> {
  const accepted = new WeakMap<object, number>();
  const server = httpServer((req, res) => {
    const at = accepted.get(req.socket) ?? Date.now();
    accepted.delete(req.socket);
    calls.push({ instance, at, method: req.method ?? "", path: req.url ?? "" });
    const upstream = httpRequest(
      {
        host: target.hostname,
        port: target.port,
        method: req.method,
        path: req.url,
        headers: req.headers,
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on("error", () => res.destroy());
    req.pipe(upstream);
  });
  server.on("connection", (socket) => accepted.set(socket, Date.now()));
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}${target.pathname.replace(/\/$/, "")}`, server };
}

/** One replica's current process, its own log and the proxies in front of it. */
interface Slot {
  instance: string;
  process: OperatorProcess;
  log: string;
  kube: TcpProxy;
  service: Server;
}

/** What starts one operator process: its kubeconfig, service URL, metrics port and POD_NAME. */
export type StartReplica = (p: {
  kubeconfig: string;
  serviceBaseUrl: string;
  metricsPort: number;
  podName: string;
}) => OperatorProcess;

/**
 * The replicas of a run; `calls` holds every service call by process instance, `terms`
 * each hold of the Lease (its holder and acquireTime, read every 50 ms).
 */
export class Replicas {
  readonly calls: ServiceCall[] = [];
  readonly terms: LeaderTerm[] = [];
  private watch: NodeJS.Timeout | undefined;
  /**
   * Handovers by kind: leader killed, Lease lost (cut off or paused); of the Lease losses,
   * the old leaders that had not exited 40 s later, and the Lease holders paused before
   * they led (standbys, left running). `restarted`: replicas that had exited by themselves.
   */
  readonly handovers = { killed: 0, leaseLost: 0, notExited: 0, neverLed: 0, restarted: 0 };
  private readonly slots: Slot[] = [];
  private started = 0;

  constructor(
    private readonly env: BenchEnvironment,
    private readonly lease: { namespace: string; name: string },
    private readonly startReplica: StartReplica,
    private readonly dir: string,
  ) {}

  async start(count: number): Promise<void> {
    for (let i = 0; i < count; i++) this.slots.push(await this.launch());
    this.watch = setInterval(() => void this.readLease(), 50);
  }

  /** The Lease's holder (by POD_NAME, before the identity's `_` suffix), or "". */
  private async readLease(): Promise<string> {
    const lease = await this.env.kube.get(LEASES, this.lease).catch(() => undefined);
    const spec = (lease?.spec ?? {}) as { holderIdentity?: string; acquireTime?: string };
    const instance = (spec.holderIdentity ?? "").split("_")[0] ?? "";
    const from = Date.parse(spec.acquireTime ?? "");
    const known = this.terms.some((t) => t.instance === instance && t.from === from);
    if (instance && Number.isFinite(from) && !known) this.terms.push({ instance, from });
    return instance;
  }

  private async launch(): Promise<Slot> {
    this.started += 1;
    const instance = `replica-${this.started}`;
    const server = this.env.kc.getCurrentCluster()?.server ?? "";
    const kube = new TcpProxy(Number(new URL(server).port));
    const port = await kube.start();
    const kc = new k8s.KubeConfig();
    kc.loadFromString(this.env.kc.exportConfig());
    const cluster = kc.getCurrentCluster();
    if (!cluster) throw new Error("no cluster in the kubeconfig");
    kc.clusters = [{ ...cluster, server: `https://127.0.0.1:${port}` }];
    const kubeconfig = join(this.dir, `${instance}.kubeconfig`);
    await writeFile(kubeconfig, kc.exportConfig());
    const service = await recordingProxy(new URL(this.env.emulator.url), instance, this.calls);
    const process = this.startReplica({
      kubeconfig,
      serviceBaseUrl: service.url,
      metricsPort: await freePort(),
      podName: instance,
    });
    const log = join(this.dir, `${instance}.log`);
    const tee = (chunk: Buffer) => appendFileSync(log, chunk);
    process.child.stdout?.on("data", tee);
    process.child.stderr?.on("data", tee);
    return { instance, process, log, kube, service: service.server };
  }

  /**
   * Resolves once every replica answers /readyz (a standby does once its caches synced),
   * a replica that exited by itself started again first.
   */
  async waitReady(timeoutMs: number): Promise<void> {
    await this.restartExited();
    await Promise.all(this.slots.map((s) => s.process.waitReady(timeoutMs)));
  }

  /** Starts again each replica that exited by itself, as its pod's restart would. */
  private async restartExited(): Promise<void> {
    for (const [i, slot] of this.slots.entries()) {
      if (!ended(slot)) continue;
      await this.retire(slot);
      this.slots[i] = await this.launch();
      this.handovers.restarted += 1;
    }
  }

  /** The slot whose process holds the Lease now, waiting for one up to `timeoutMs`. */
  private async leader(timeoutMs: number): Promise<Slot | undefined> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      const holder = await this.readLease();
      const slot = this.slots.find((s) => s.instance === holder);
      if (slot) return slot;
      await sleep(100);
    }
    return undefined;
  }

  /**
   * Hands over and restarts the old leader: `leaseLoss` cuts its API server (or, with
   * `pause`, stops it until the other replica holds the Lease), else it is SIGKILLed.
   */
  async handOver(leaseLoss: boolean, pause = false): Promise<string> {
    await this.restartExited();
    const slot = await this.leader(30_000);
    if (!slot) return "no leader to hand over from";
    let outcome = "";
    if (leaseLoss) {
      if (pause) await this.pauseUntilHandedOver(slot);
      else slot.kube.partition();
      outcome = await this.afterLoss(slot);
      this.handovers.leaseLost += 1;
    } else this.handovers.killed += 1;
    await this.retire(slot);
    this.slots[this.slots.indexOf(slot)] = await this.launch();
    const how = leaseLoss ? `Lease lost${pause ? " (paused)" : ""} by` : "killed";
    return `${how} ${slot.instance}${outcome}`;
  }

  /**
   * Waits until the old holder exits, for 40 s; one that never said it leads (paused
   * while its winning round was under way) is a standby once the lease duration passed.
   */
  private async afterLoss(slot: Slot): Promise<string> {
    const since = Date.now();
    while (Date.now() - since < 40_000) {
      if (ended(slot)) return "";
      const led = readFileSync(slot.log, "utf8").includes('"msg":"became the leader"');
      if (!led && Date.now() - since > REPLICA_LEASE.leaseDurationMs) {
        this.handovers.neverLed += 1;
        return ", which never led (a standby)";
      }
      await sleep(100);
    }
    this.handovers.notExited += 1;
    return ", which had not exited 40 s later";
  }

  private async pauseUntilHandedOver(slot: Slot): Promise<void> {
    slot.process.child.kill("SIGSTOP");
    const other = this.slots.find((s) => s !== slot)?.instance;
    const deadline = Date.now() + 20_000;
    while (Date.now() < deadline && (await this.readLease()) !== other) await sleep(50);
    await sleep(300);
    slot.process.child.kill("SIGCONT");
  }

  private async retire(slot: Slot): Promise<void> {
    await slot.process.kill();
    await slot.kube.stop();
    slot.service.closeAllConnections();
    await new Promise<void>((r) => slot.service.close(() => r()));
  }

  /** SIGTERM to every replica (the standby first), then the proxies close. */
  async stop(): Promise<void> {
    for (const s of [...this.slots].reverse()) await s.process.stop();
    await this.kill();
  }

  async kill(): Promise<void> {
    clearInterval(this.watch);
    for (const s of this.slots.splice(0)) await this.retire(s);
  }
}

function ended(slot: Slot): boolean {
  return slot.process.child.exitCode !== null || slot.process.child.signalCode !== null;
}

/**
 * The replicas' config: leader election on the Lease `name` in `namespace`, and a stop
 * budget of 5 s, so that a leader cut from its API server exits within seconds.
 */
export function replicaConfig(namespace: string, name: string) {
  return {
    leaderElection: { enabled: true, leaseNamespace: namespace, leaseName: name, ...REPLICA_LEASE },
    shutdownTimeoutMs: 5000,
  };
}
