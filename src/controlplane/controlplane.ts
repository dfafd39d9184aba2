import type { ChildProcess } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { Agent, request } from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  type BinariesOptions,
  type ControlPlaneBinaries,
  controlPlaneBinaries,
} from "./binaries.js";
import { type ControlPlaneCerts, generateCerts, writeAdminKubeconfig } from "./certs.js";
import { controllerManagerArgs, controllerManagerHealthy } from "./controller-manager.js";
import { freePort, spawnLogged, stopProcess, type WaitLimits, waitFor } from "./processes.js";

export { freePort };

/** Options of a local control plane. */
export interface ControlPlaneOptions {
  /** Where the binaries are; resolved (and built on first use) when absent. */
  binaries?: ControlPlaneBinaries;
  /** How long to wait for etcd and the API server to be ready. Default 120 s. */
  startTimeoutMs?: number;
  /** Extra kube-apiserver flags, `--name=value`. */
  apiServerFlags?: string[];
  /** Progress of a build of the binaries (only a first run builds). */
  onBuildProgress?: BinariesOptions["onProgress"];
  /** Ends `start()` early: it stops what it started, removes the directory and rejects. */
  signal?: AbortSignal;
}

/** Every plane started in this process, so that an abrupt exit still kills them. */
const live = new Set<LocalControlPlane>();
let exitHookInstalled = false;
function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on("exit", () => {
    for (const plane of live) plane.killNow();
  });
}

/**
 * etcd + kube-apiserver on free loopback ports, with generated certificates and RBAC
 * on, as controller-runtime's envtest starts them, plus kube-controller-manager with the
 * garbage collector, the namespace controller, ClusterRole aggregation and the deployment,
 * replicaset and job controllers (see controller-manager.ts). `start()` waits for
 * /readyz and the default namespace, writes a kubeconfig for an admin in group
 * system:masters, and waits for the controller manager's /healthz; `stop()` ends the
 * processes and removes the temporary directory.
 */
export class LocalControlPlane {
  readonly options: ControlPlaneOptions;
  dir = "";
  certs?: ControlPlaneCerts;
  binaries?: ControlPlaneBinaries;
  apiServerPort = 0;
  etcdPort = 0;
  controllerManagerPort = 0;
  private etcd?: ChildProcess;
  private apiServer?: ChildProcess;
  private readonly secondApiServers = new Set<ChildProcess>();
  private controllerManager?: ChildProcess;
  private readonly startLimits: WaitLimits;

  constructor(options: ControlPlaneOptions = {}) {
    this.options = options;
    this.startLimits = { timeoutMs: options.startTimeoutMs ?? 120_000, signal: options.signal };
  }

  /** https://127.0.0.1:<port> */
  get server(): string {
    return `https://127.0.0.1:${this.apiServerPort}`;
  }

  /** Path of the admin kubeconfig. */
  get kubeconfigPath(): string {
    return join(this.dir, "kubeconfig");
  }

  /** Starts etcd and the API server and waits until the API serves. */
  async start(): Promise<this> {
    installExitHook();
    live.add(this);
    try {
      const { onBuildProgress: onProgress, signal } = this.options;
      this.binaries = this.options.binaries ?? (await controlPlaneBinaries({ onProgress, signal }));
      signal?.throwIfAborted();
      this.dir = await mkdtemp(join(tmpdir(), "aidc-controlplane-"));
      this.certs = await generateCerts(this.dir);
      this.etcdPort = await freePort();
      this.apiServerPort = await freePort();
      await this.startEtcd();
      await this.startApiServer();
      await this.writeKubeconfig();
      await this.startControllerManager();
      return this;
    } catch (err) {
      await this.stop();
      throw err;
    }
  }

  private async startEtcd(): Promise<void> {
    const bins = this.binaries as ControlPlaneBinaries;
    const peerPort = await freePort();
    const client = `http://127.0.0.1:${this.etcdPort}`;
    const peer = `http://127.0.0.1:${peerPort}`;
    this.etcd = spawnLogged(this.dir, bins.etcd, "etcd", [
      `--data-dir=${join(this.dir, "etcd-data")}`,
      `--listen-client-urls=${client}`,
      `--advertise-client-urls=${client}`,
      `--listen-peer-urls=${peer}`,
      `--initial-advertise-peer-urls=${peer}`,
      `--initial-cluster=default=${peer}`,
      "--unsafe-no-fsync=true",
      "--log-level=warn",
    ]);
    await waitFor(this.dir, this.startLimits, "etcd", this.etcd, async () => {
      const res = await fetch(`${client}/health`);
      return res.ok;
    });
  }

  /**
   * Starts (or restarts) kube-apiserver on the same port against the same etcd, with
   * `flags` as its extra flags (default: the options' `apiServerFlags`).
   */
  async startApiServer(flags = this.options.apiServerFlags ?? []): Promise<void> {
    this.apiServer = await this.runApiServer(this.apiServerPort, flags);
  }

  /**
   * Starts another kube-apiserver on the same etcd, as a second member of a highly
   * available control plane, on `port` (default a free one; the port it ran on to
   * restart it); resolves with its port and how to stop it.
   */
  async startSecondApiServer(
    flags: string[] = [],
    port?: number,
  ): Promise<{ port: number; stop(): Promise<void> }> {
    const p = port ?? (await freePort());
    const child = await this.runApiServer(p, flags);
    this.secondApiServers.add(child);
    return {
      port: p,
      stop: async () => {
        await stopProcess(child);
        this.secondApiServers.delete(child);
      },
    };
  }

  /** kube-apiserver on `port`, once it serves. */
  private async runApiServer(port: number, flags: string[]): Promise<ChildProcess> {
    const bins = this.binaries as ControlPlaneBinaries;
    const c = this.certs as ControlPlaneCerts;
    const child = spawnLogged(this.dir, bins.kubeApiserver, "kube-apiserver", [
      `--etcd-servers=http://127.0.0.1:${this.etcdPort}`,
      `--cert-dir=${join(this.dir, `apiserver-certs-${port}`)}`,
      "--bind-address=127.0.0.1",
      "--advertise-address=127.0.0.1",
      `--secure-port=${port}`,
      `--tls-cert-file=${c.serverCert}`,
      `--tls-private-key-file=${c.serverKey}`,
      `--client-ca-file=${c.caCert}`,
      `--service-account-key-file=${c.serviceAccountPub}`,
      `--service-account-signing-key-file=${c.serviceAccountKey}`,
      "--service-account-issuer=https://kubernetes.default.svc",
      "--service-cluster-ip-range=10.0.0.0/24",
      "--authorization-mode=RBAC",
      "--allow-privileged=true",
      "--endpoint-reconciler-type=none",
      "--disable-admission-plugins=ServiceAccount",
      ...flags,
    ]);
    try {
      await waitFor(this.dir, this.startLimits, "kube-apiserver", child, async () => {
        const res = await this.get("/readyz", port);
        if (res.status !== 200) return false;
        const ns = await this.get("/api/v1/namespaces/default", port);
        return ns.status === 200;
      });
    } catch (err) {
      // Not yet among the servers stop() ends.
      await stopProcess(child);
      throw err;
    }
    return child;
  }

  private async startControllerManager(): Promise<void> {
    const bins = this.binaries as ControlPlaneBinaries;
    this.controllerManagerPort = await freePort();
    this.controllerManager = spawnLogged(
      this.dir,
      bins.kubeControllerManager,
      "kube-controller-manager",
      controllerManagerArgs({
        kubeconfig: this.kubeconfigPath,
        dir: this.dir,
        port: this.controllerManagerPort,
      }),
    );
    await waitFor(
      this.dir,
      this.startLimits,
      "kube-controller-manager",
      this.controllerManager,
      () => controllerManagerHealthy(this.controllerManagerPort),
    );
  }

  /** Stops kube-apiserver only (etcd keeps the data), for restart tests. */
  async stopApiServer(): Promise<void> {
    await stopProcess(this.apiServer);
    this.apiServer = undefined;
  }

  /** A GET against the API server (on `port`) as the admin; resolves with status and body. */
  async get(path: string, port = this.apiServerPort): Promise<{ status: number; body: string }> {
    const c = this.certs as ControlPlaneCerts;
    const [ca, cert, key] = await Promise.all([
      readFile(c.caCert),
      readFile(c.adminCert),
      readFile(c.adminKey),
    ]);
    return new Promise((resolveGet, reject) => {
      const req = request(
        `https://127.0.0.1:${port}${path}`,
        { agent: new Agent({ ca, cert, key }), timeout: 5000 },
        (res) => {
          let body = "";
          res.on("data", (d) => {
            body += d;
          });
          res.on("end", () => resolveGet({ status: res.statusCode ?? 0, body }));
        },
      );
      req.on("error", reject);
      req.on("timeout", () => req.destroy(new Error("timeout")));
      req.end();
    });
  }

  /** The server's version, from /version (gitVersion). */
  async version(): Promise<string> {
    const res = await this.get("/version");
    return (JSON.parse(res.body) as { gitVersion: string }).gitVersion;
  }

  private async writeKubeconfig(): Promise<void> {
    await writeAdminKubeconfig(this.kubeconfigPath, this.server, this.certs as ControlPlaneCerts);
  }

  /** Stops the processes (SIGTERM, then SIGKILL) and removes the directory. */
  async stop(): Promise<void> {
    await stopProcess(this.controllerManager);
    this.controllerManager = undefined;
    for (const child of this.secondApiServers) await stopProcess(child);
    this.secondApiServers.clear();
    await stopProcess(this.apiServer);
    await stopProcess(this.etcd);
    this.apiServer = undefined;
    this.etcd = undefined;
    live.delete(this);
    if (this.dir && !process.env.AIDC_CONTROLPLANE_KEEP) {
      await rm(this.dir, { recursive: true, force: true });
    }
  }

  /** Process ids of etcd and the API server while they run (to measure their memory). */
  pids(): { etcd?: number; apiServer?: number } {
    return {
      ...(this.etcd?.pid !== undefined ? { etcd: this.etcd.pid } : {}),
      ...(this.apiServer?.pid !== undefined ? { apiServer: this.apiServer.pid } : {}),
    };
  }

  /** Synchronous kill, for process exit hooks. */
  killNow(): void {
    for (const child of [
      this.controllerManager,
      ...this.secondApiServers,
      this.apiServer,
      this.etcd,
    ]) {
      if (child && child.exitCode === null) child.kill("SIGKILL");
    }
  }
}
