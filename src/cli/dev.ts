import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { promisify } from "node:util";
import { repoRoot } from "../controlplane/binaries.js";
import { freePort, LocalControlPlane } from "../controlplane/controlplane.js";
import { LocalS3Server } from "../controlplane/s3-server.js";
import { allCrds } from "../crds/index.js";
import { API_KEY_SECRET_KEY } from "../crds/serviceconnection.js";
import { defaultNasProducts, defaultTrainingProducts } from "../emulator/fixtures.js";
import { EXTERNAL_HOST } from "../emulator/pods.js";
import { type RunningEmulator, startEmulator } from "../emulator/server.js";
import { buildNotice } from "./controlplane.js";
import { runOperator } from "./run.js";

const run = promisify(execFile);

/**
 * The playground's operator namespace, as if the chart were installed there: the one
 * namespace it reads connection Secrets in (connections.secretNamespace), where the
 * samples' ServiceConnections name their Secrets.
 */
export const PLAYGROUND_NAMESPACE = "aidc-system";

/**
 * The Secret holding the emulator's key in {@link PLAYGROUND_NAMESPACE}, named as the
 * chart's default connection's (deploy/samples/real-service/serviceconnection.yaml).
 */
export const PLAYGROUND_API_KEY_SECRET = "aidc-operator-api-key";

/** Options of {@link startPlayground}. */
export interface PlaygroundOptions {
  /** Apply deploy/samples (default true). */
  samples?: boolean;
  /** Emulator subscription delay, so that progress is visible (default 1500 ms). */
  subscriptionDelayMs?: number;
  /** Where progress lines go. */
  out?: (line: string) => void;
  /** Where the operator's JSON log lines go (default stdout). */
  operatorLog?: (line: string) => void;
  /** Ends the start-up early: what has started stops, in reverse order, and it rejects. */
  signal?: AbortSignal;
}

/** A running playground. */
export interface Playground {
  kubeconfigPath: string;
  emulatorUrl: string;
  /** The directory of the control plane's kubectl (a user may have none of their own). */
  binDir: string | undefined;
  /** The lines a user pastes in a second terminal: KUBECONFIG, PATH, AIDC_EMULATOR_URL. */
  shellSetup: string;
  /** `kubectl` with the playground's kubeconfig; resolves with stdout. */
  kubectl(args: string[]): Promise<string>;
  /** Stops the operator, the emulator and the control plane. */
  stop(): Promise<void>;
}

/**
 * Starts the local playground: a control plane (etcd, kube-apiserver,
 * kube-controller-manager), the service emulator, the CRDs, the operator (in this
 * process, against both), and the samples.
 */
export async function startPlayground(options: PlaygroundOptions = {}): Promise<Playground> {
  const out = options.out ?? ((line: string) => process.stdout.write(`${line}\n`));
  const { signal } = options;
  const plane = new LocalControlPlane({ onBuildProgress: buildNotice(out), signal });
  out("starting the local control plane (etcd, kube-apiserver, kube-controller-manager)...");
  await plane.start();
  try {
    return await startOnPlane(plane, options, out);
  } catch (err) {
    await plane.stop();
    throw err;
  }
}

async function startOnPlane(
  plane: LocalControlPlane,
  options: PlaygroundOptions,
  out: (line: string) => void,
): Promise<Playground> {
  const kubectlBin = plane.binaries?.kubectl ?? "kubectl";
  const { signal } = options;
  const kubectl = async (args: string[], input?: string) => {
    const call = run(kubectlBin, [`--kubeconfig=${plane.kubeconfigPath}`, ...args], { signal });
    // A kubectl stopped before it read its input (start-up interrupted) fails the call.
    call.child.stdin?.on("error", () => undefined).end(input ?? "");
    return (await call).stdout;
  };

  // A fresh key per playground: it exists only in this process's memory.
  const apiKey = randomBytes(24).toString("hex");
  const emulator = await startEmulator({
    apiKey,
    subscriptionDelayMs: options.subscriptionDelayMs ?? 1500,
  });
  out(`service emulator at ${emulator.url}`);
  // What a user puts in spec.productCode here (on the real service: its product lists).
  const training = defaultTrainingProducts().map(
    (p) => `${p.productCode} (${p.name}, ${p.remainingCount} left)`,
  );
  const nas = defaultNasProducts().map((p) => `${p.productCode} (${p.name})`);
  out(`emulator training product codes: ${training.join(", ")}`);
  out(`emulator NAS product codes: ${nas.join(", ")}`);
  let s3: LocalS3Server | undefined;
  try {
    signal?.throwIfAborted();
    // The object storage of the default connection: MinIO with fresh keys and data.
    s3 = await new LocalS3Server({ onBuildProgress: buildNotice(out), signal }).start();
    out(`object storage (MinIO) at ${s3.url}`);
    return await startOperatorAndSamples(plane, emulator, s3, apiKey, kubectl, options, out);
  } catch (err) {
    await s3?.stop();
    await emulator.stop();
    throw err;
  }
}

async function startOperatorAndSamples(
  plane: LocalControlPlane,
  emulator: RunningEmulator,
  s3: LocalS3Server,
  apiKey: string,
  kubectl: (args: string[], input?: string) => Promise<string>,
  options: PlaygroundOptions,
  out: (line: string) => void,
): Promise<Playground> {
  await kubectl(["apply", "--server-side", "-k", join(repoRoot, "deploy", "crds")]);
  await kubectl([
    "wait",
    "--for=condition=Established",
    "crd",
    "-l",
    "app.kubernetes.io/part-of=aidc-operator",
    "--timeout=60s",
  ]);
  await untilListable(kubectl, options.signal);
  out("CRDs installed");
  // On stdin, not in the arguments: a failed command's message quotes its arguments.
  await kubectl(["apply", "-f", "-"], playgroundKeySecret(apiKey));
  out(
    `the emulator's API key is in the Secret ${PLAYGROUND_NAMESPACE}/${PLAYGROUND_API_KEY_SECRET} (key ${API_KEY_SECRET_KEY}) for ServiceConnections`,
  );

  options.signal?.throwIfAborted();
  let stopOperator: () => void = () => undefined;
  const stopped = new Promise<void>((r) => {
    stopOperator = r;
  });
  const metricsPort = await freePort();
  const operator = runOperator({
    kubeconfig: plane.kubeconfigPath,
    env: {
      AIDC_API_KEY: apiKey,
      AIDC_SERVICE_BASE_URL: emulator.url,
      // The local emulator speaks plain http; a real service must be https.
      AIDC_SERVICE_ALLOW_INSECURE_HTTP: "true",
      AIDC_OBJECT_STORAGE_ENDPOINT: s3.url,
      AIDC_OBJECT_STORAGE_ALLOW_INSECURE_HTTP: "true",
      AIDC_S3_ACCESS_KEY_ID: s3.accessKeyId,
      AIDC_S3_SECRET_ACCESS_KEY: s3.secretAccessKey,
      AIDC_METRICS_PORT: String(metricsPort),
      AIDC_POLL_INTERVAL_MS: "2000",
      // A job that sets exposePorts gets its Services: the emulator's open ports all
      // answer on one documentation address, the playground's "gateway network".
      AIDC_EXPOSURE: "true",
      AIDC_EXPOSURE_ALLOWED_CIDRS: `${EXTERNAL_HOST}/32`,
      // One person, one tenant: the CciInstance sample binds an instance by name.
      AIDC_ADOPTION_NAMESPACES: "*",
      POD_NAMESPACE: PLAYGROUND_NAMESPACE,
      AIDC_LOG_LEVEL: process.env.AIDC_LOG_LEVEL ?? "warn",
    },
    stopSignal: stopped,
    ...(options.operatorLog
      ? { logDestination: { write: (line: string) => options.operatorLog?.(line.trimEnd()) } }
      : {}),
  });
  out(`operator running (metrics and health on http://127.0.0.1:${metricsPort})`);

  if (options.samples ?? true) {
    try {
      await kubectl(["apply", "-n", "default", "-k", join(repoRoot, "deploy", "samples")]);
    } catch (err) {
      stopOperator();
      await operator.catch(() => 1);
      throw err;
    }
    out("samples applied in namespace default");
  }

  // The control plane's own kubectl first on the PATH: a newcomer may have none, and it
  // matches the API server's version.
  const binDir = plane.binaries?.dir;
  const shellSetup = [
    `export KUBECONFIG=${plane.kubeconfigPath}`,
    ...(binDir ? [`export PATH=${binDir}:$PATH`] : []),
    `export AIDC_EMULATOR_URL=${emulator.url}`,
  ].join("\n");
  return {
    kubeconfigPath: plane.kubeconfigPath,
    emulatorUrl: emulator.url,
    binDir,
    shellSetup,
    kubectl,
    async stop() {
      stopOperator();
      await operator.catch(() => 1);
      await emulator.stop();
      await s3.stop();
      await plane.stop();
    },
  };
}

/** The namespace {@link PLAYGROUND_NAMESPACE} and the emulator key's Secret in it. */
function playgroundKeySecret(apiKey: string): string {
  const namespace = {
    apiVersion: "v1",
    kind: "Namespace",
    metadata: { name: PLAYGROUND_NAMESPACE },
  };
  const secret = {
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name: PLAYGROUND_API_KEY_SECRET, namespace: PLAYGROUND_NAMESPACE },
    stringData: { [API_KEY_SECRET_KEY]: apiKey },
  };
  return JSON.stringify({ apiVersion: "v1", kind: "List", items: [namespace, secret] });
}

/**
 * Waits, retrying quietly, until every kind can be listed: a CRD is Established before
 * the API server's storage for it is ready (a list answers 429 "storage is
 * (re)initializing" for a moment), and an operator started then logs a warning per kind.
 */
async function untilListable(
  kubectl: (args: string[]) => Promise<string>,
  signal: AbortSignal | undefined,
): Promise<void> {
  const kinds = allCrds.map((c) => `${c.plural}.${c.group}`).join(",");
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      await kubectl(["get", kinds, "-A", "-o", "name"]);
      return;
    } catch (err) {
      if (Date.now() > deadline || signal?.aborted) throw err;
      await new Promise((r) => setTimeout(r, 250));
    }
  }
}
