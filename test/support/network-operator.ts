/**
 * `aidc-operator run` in-process (runOperator, src/cli/run.ts) as a user runs it: from a
 * kubeconfig file (or the in-cluster files), with its config file, against an emulator;
 * and the kubeconfigs and the NasVolumes a user writes. For the tests of the networks
 * between the operator and the API server (test/integration/kube-networks-*.test.ts),
 * where what matters is that the operator reaches the API server at all: by default
 * only the NasVolume controller runs, and a NasVolume becoming Ready is the proof.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as k8s from "@kubernetes/client-node";
import { runOperator } from "../../src/cli/run.js";
import type { ControllerFactory } from "../../src/controllers/index.js";
import { nasVolumeController } from "../../src/controllers/nasvolume/controller.js";
import { nasVolumeCrd } from "../../src/crds/nasvolume.js";
import { type RunningEmulator, startEmulator } from "../../src/emulator/server.js";
import type { Manager } from "../../src/runtime/manager.js";
import { installCrds } from "./crds.js";
import { createNamespace } from "./kube.js";
import { TEST_API_KEY } from "./operator.js";

/** How long a NasVolume may take to become Ready once the operator started (a loaded CI machine). */
export const READY_MS = 60_000;

/** What the tests of a file share: an emulator (API key {@link TEST_API_KEY}) and a directory. */
export interface NetworkTestBed {
  emulator: RunningEmulator;
  /** A temporary directory for kubeconfigs, logs and service account files. */
  dir: string;
  /** Stops the emulator and removes the directory. */
  stop(): Promise<void>;
}

/** Installs the CRDs on the API server of `kc`, starts an emulator and makes a directory. */
export async function startNetworkTestBed(kc: k8s.KubeConfig): Promise<NetworkTestBed> {
  await installCrds(kc);
  const emulator = await startEmulator({ apiKey: TEST_API_KEY, subscriptionDelayMs: 300 });
  const dir = await mkdtemp(join(tmpdir(), "aidc-networks-"));
  return {
    emulator,
    dir,
    stop: async () => {
      await emulator.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** One cluster and its user, as a kubeconfig context names them. */
export interface KubeconfigAccess {
  server: string;
  ca?: Buffer;
  /** The name the server's certificate is checked against, when not the URL's host. */
  tlsServerName?: string;
  proxyUrl?: string;
  token?: string;
  tokenFile?: string;
  clientCert?: Buffer;
  clientKey?: Buffer;
  /** Further fields of the kubeconfig's cluster and user, as written (file paths, exec, as...). */
  fields?: { cluster?: Record<string, unknown>; user?: Record<string, unknown> };
}

/** The admin's access of the API server of `kc` (its CA and client certificate). */
export function adminAccess(kc: k8s.KubeConfig): KubeconfigAccess {
  const cluster = kc.getCurrentCluster();
  const user = kc.getCurrentUser();
  if (!cluster?.caData || !user?.certData || !user.keyData) {
    throw new Error("the admin kubeconfig needs a CA and a client certificate inline");
  }
  return {
    server: cluster.server,
    ca: Buffer.from(cluster.caData, "base64"),
    clientCert: Buffer.from(user.certData, "base64"),
    clientKey: Buffer.from(user.keyData, "base64"),
  };
}

/**
 * Writes a kubeconfig with a context (and a cluster and user of the same name) per entry
 * of `contexts`, `current` its current context. JSON, which kubeconfig readers take as YAML.
 */
export async function writeKubeconfig(
  path: string,
  contexts: Record<string, KubeconfigAccess>,
  current: string,
): Promise<string> {
  const b64 = (b: Buffer) => b.toString("base64");
  const entries = Object.entries(contexts);
  const doc = {
    apiVersion: "v1",
    kind: "Config",
    clusters: entries.map(([name, a]) => ({
      name,
      cluster: {
        server: a.server,
        ...(a.ca ? { "certificate-authority-data": b64(a.ca) } : {}),
        ...(a.tlsServerName ? { "tls-server-name": a.tlsServerName } : {}),
        ...(a.proxyUrl ? { "proxy-url": a.proxyUrl } : {}),
        ...a.fields?.cluster,
      },
    })),
    users: entries.map(([name, a]) => ({
      name,
      user: {
        ...(a.token ? { token: a.token } : {}),
        ...(a.tokenFile ? { tokenFile: a.tokenFile } : {}),
        ...(a.clientCert ? { "client-certificate-data": b64(a.clientCert) } : {}),
        ...(a.clientKey ? { "client-key-data": b64(a.clientKey) } : {}),
        ...a.fields?.user,
      },
    })),
    contexts: entries.map(([name]) => ({ name, context: { cluster: name, user: name } })),
    "current-context": current,
  };
  await writeFile(path, JSON.stringify(doc, null, 2), { mode: 0o600 });
  return path;
}

/** How to run the operator; exactly one of `kubeconfig` and `serviceAccountDir` (with the env). */
export interface NetworkOperatorOptions {
  /** The emulator's URL (its API key is {@link TEST_API_KEY}). */
  emulatorUrl: string;
  namespaces: string[];
  kubeconfig?: string;
  /** `--context`. */
  context?: string;
  /** The in-cluster files (with KUBERNETES_SERVICE_HOST/PORT in `env`). */
  serviceAccountDir?: string;
  /** The operator's environment besides the API key. */
  env?: Record<string, string>;
  /** Config file fields over the defaults here (shallow). */
  config?: Record<string, unknown>;
  /** Default: the NasVolume controller only. */
  controllers?: readonly ControllerFactory[];
}

/** An operator running in-process. */
export interface NetworkOperator {
  /** Resolves with the exit code of runOperator (rejects when it failed to start). */
  exited: Promise<number>;
  /** The manager, once started. */
  manager(): Manager | undefined;
  /** The last `n` log lines, for a failure's message. */
  logTail(n?: number): string;
  /** Asks it to stop (as SIGTERM does); resolves with its exit code. */
  stop(): Promise<number | string>;
}

/** Starts `aidc-operator run` in-process (see the module comment). */
export async function startNetworkOperator(
  options: NetworkOperatorOptions,
): Promise<NetworkOperator> {
  const dir = await mkdtemp(join(tmpdir(), "aidc-network-op-"));
  const configFile = join(dir, "config.json");
  await writeFile(
    configFile,
    JSON.stringify({
      service: { baseUrl: options.emulatorUrl, allowInsecureHttp: true, timeoutMs: 5_000 },
      watchNamespaces: options.namespaces,
      pollIntervalMs: { default: 500 },
      backoff: { baseMs: 100, maxMs: 2_000 },
      server: { port: 0, host: "127.0.0.1" },
      shutdownTimeoutMs: 2_000,
      log: { level: process.env.AIDC_TEST_LOG ?? "info" },
      ...options.config,
    }),
  );
  const lines: string[] = [];
  let manager: Manager | undefined;
  let stop: () => void = () => undefined;
  const stopSignal = new Promise<void>((r) => {
    stop = r;
  });
  const exited = runOperator({
    configFile,
    env: { AIDC_API_KEY: TEST_API_KEY, ...options.env },
    ...(options.kubeconfig ? { kubeconfig: options.kubeconfig } : {}),
    ...(options.context ? { context: options.context } : {}),
    ...(options.serviceAccountDir ? { serviceAccountDir: options.serviceAccountDir } : {}),
    controllerFactories: options.controllers ?? [nasVolumeController],
    stopSignal,
    onStarted: (m) => {
      manager = m;
    },
    logDestination: {
      write: (line: string) => {
        lines.push(line.trimEnd());
        if (lines.length > 2_000) lines.splice(0, 1_000);
      },
    },
  }).finally(() => rm(dir, { recursive: true, force: true }));
  // How it ended goes into the log tail (a failure's message); a start that fails is
  // thereby handled here first, and reported by `exited` too.
  exited.then(
    (code) => lines.push(`(runOperator returned ${code})`),
    (err: unknown) => lines.push(`(runOperator failed: ${String(err)})`),
  );
  return {
    exited,
    manager: () => manager,
    logTail: (n = 15) => lines.slice(-n).join("\n"),
    stop: async () => {
      stop();
      return exited.catch((err: unknown) => `failed: ${String(err)}`);
    },
  };
}

/**
 * Runs the operator in-process on `kubeconfig` (undefined: as `more.env`'s KUBECONFIG
 * says) and `more`, with the emulator of `bed`, until a NasVolume of a fresh namespace
 * of the API server of `kc` is Ready; then stops it, and fails unless it exited 0.
 * Resolves with the operator's log lines.
 */
export async function readyThrough(
  bed: NetworkTestBed,
  kc: k8s.KubeConfig,
  kubeconfig: string | undefined,
  prefix: string,
  more: { context?: string; env?: Record<string, string> } = {},
): Promise<string> {
  const namespace = await createNamespace(kc, prefix);
  const op = await startNetworkOperator({
    emulatorUrl: bed.emulator.url,
    namespaces: [namespace],
    ...(kubeconfig ? { kubeconfig } : {}),
    ...more,
  });
  let code: number | string = "not stopped";
  try {
    const nas = new UserNasVolumes(kc, namespace);
    await nas.create("through");
    await nas.waitReady("through", READY_MS, op);
  } finally {
    code = await op.stop();
  }
  if (code !== 0) throw new Error(`the operator exited with ${code}:\n${op.logTail()}`);
  return op.logTail(Number.MAX_SAFE_INTEGER);
}

/** NasVolumes as a user creates and reads them, through client-node (HTTP/1.1). */
export class UserNasVolumes {
  private readonly api: k8s.CustomObjectsApi;
  /** Where its NasVolumes are (group, version, plural, namespace), for the calls it has no method of. */
  readonly where: { group: string; version: string; plural: string; namespace: string };

  constructor(kc: k8s.KubeConfig, namespace: string) {
    this.api = kc.makeApiClient(k8s.CustomObjectsApi);
    this.where = {
      group: nasVolumeCrd.group,
      version: nasVolumeCrd.version,
      plural: nasVolumeCrd.plural,
      namespace,
    };
  }

  /** Creates `name` (a standard NAS of 150 GB). */
  async create(name: string): Promise<void> {
    await this.api.createNamespacedCustomObject({
      ...this.where,
      body: {
        apiVersion: `${nasVolumeCrd.group}/${nasVolumeCrd.version}`,
        kind: nasVolumeCrd.kind,
        metadata: { name, namespace: this.where.namespace },
        spec: { productCode: "nas.capacity.standard", capacityGB: 150, mountPath: `/data/${name}` },
      },
    });
  }

  /** The Ready condition of `name` (`status/reason`), or why there is none. */
  async readiness(name: string): Promise<string> {
    const obj = (await this.api.getNamespacedCustomObject({ ...this.where, name })) as {
      status?: { conditions?: { type: string; status: string; reason?: string }[] };
    };
    const ready = obj.status?.conditions?.find((c) => c.type === "Ready");
    return ready ? `${ready.status}/${ready.reason ?? ""}` : "no Ready condition";
  }

  /**
   * Waits until `name` is Ready (True/Available); resolves with how long that took. On
   * timeout the error names its readiness and the operator's last log lines.
   */
  async waitReady(name: string, timeoutMs: number, op?: NetworkOperator): Promise<number> {
    const started = Date.now();
    let last = "not read";
    while (Date.now() - started < timeoutMs) {
      last = await this.readiness(name).catch((err: unknown) => `unreadable: ${String(err)}`);
      if (last === "True/Available") return Date.now() - started;
      await new Promise((r) => setTimeout(r, 250));
    }
    throw new Error(
      `NasVolume ${this.where.namespace}/${name} not Ready within ${timeoutMs} ms (${last}); ` +
        `the operator's last lines:\n${op?.logTail() ?? "(none)"}`,
    );
  }
}
