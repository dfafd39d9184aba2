import type { Command } from "commander";
import type { DestinationStream } from "pino";
import { apiKeyReader, checkApiKey } from "../config/api-key.js";
import { loadConfig } from "../config/load.js";
import { connectionWebIdentityOptions, defaultObjectStorage } from "../config/object-storage.js";
import { concurrencyFor } from "../config/schema.js";
import { SETTINGS } from "../config/settings.js";
import { shardLeaseName, shardSelector } from "../config/shard.js";
import { connectionClient } from "../controllers/connections/client.js";
import { connectionMetricLabel, ServiceConnections } from "../controllers/connections/registry.js";
import { type ControllerFactory, controllers } from "../controllers/index.js";
import { registeredControllers } from "../controllers/permissions.js";
import { allCrds, GROUP, REASONS } from "../crds/index.js";
import { KUBECONFIG_SEARCH, loadKubeConfig } from "../runtime/kube-config.js";
import { environmentProxy } from "../runtime/kube-proxy.js";
import { LeaseFence } from "../runtime/leader-election.js";
import {
  createLogger,
  exitOnUncaughtErrors,
  logProcessWarnings,
  logWritten,
} from "../runtime/logging.js";
import { Manager } from "../runtime/manager.js";
import { RuntimeMetrics } from "../runtime/metrics.js";
import { SecretRedactor } from "../runtime/outbound-guards.js";
import type { ResourceDescriptor } from "../runtime/resource.js";
import type { ServiceClient } from "../service/client.js";
import { proxyOptionsFor } from "../service/service-proxy.js";
import { checkNamedSettings } from "./named-settings.js";
import {
  createServiceClient,
  reportServiceOperations,
  type ServiceClientDeps,
} from "./service-client.js";
import { waitForSignal } from "./signals.js";

/** Options of {@link runOperator}. */
export interface RunOptions {
  /** `--config` file. */
  configFile?: string;
  /** Flags by long name. */
  flags?: Record<string, string | boolean | undefined>;
  env?: Record<string, string | undefined>;
  /** kubeconfig file; default: $KUBECONFIG, else in-cluster, else ~/.kube/config. */
  kubeconfig?: string;
  /** A context of the kubeconfig other than its current one (`--context`). */
  context?: string;
  /** Where the in-cluster service account files are (tests; default the pod's). */
  serviceAccountDir?: string;
  /** Default {@link createServiceClient}. */
  serviceClientFactory?: (deps: ServiceClientDeps) => ServiceClient;
  /** Default: the registry in src/controllers/index.ts. */
  controllerFactories?: readonly ControllerFactory[];
  /** Resolves when the operator should stop (default: SIGTERM or SIGINT). */
  stopSignal?: Promise<unknown>;
  /** Called once the manager has started (tests). */
  onStarted?: (manager: Manager) => void;
  /** Where the JSON log lines go; default stdout (tests pass a stream to read them). */
  logDestination?: DestinationStream;
  /**
   * The process is the operator's own (the CLI): Node's warnings, and an error nothing
   * caught, are JSON lines of the log too, not text on stderr.
   */
  ownProcess?: boolean;
}

/**
 * `aidc-operator run`: loads and validates the config, builds the clients and the
 * controllers, starts the manager, and on SIGTERM shuts down gracefully within
 * `shutdownTimeoutMs` (stop taking work, finish in-flight reconciles, release the Lease).
 * Resolves, its log written, with the exit code: 0 after a graceful stop, 1 when it failed.
 */
export async function runOperator(options: RunOptions = {}): Promise<number> {
  const env = options.env ?? process.env;
  const config = await loadConfig({
    ...(options.configFile ? { file: options.configFile } : {}),
    env,
    ...(options.flags ? { flags: options.flags } : {}),
  });
  // The names there are: the registry's controllers, and those given in their place.
  checkNamedSettings(
    config,
    registeredControllers({ exposure: true, credentialsExport: true }, [
      ...controllers,
      ...(options.controllerFactories ?? []),
    ]),
  );
  // Every key read is kept by the redactor before it is sent: whatever quotes it later
  // (a service message) is blanked in log lines and in every write to the API server.
  const redactor = new SecretRedactor();
  const log = createLogger({
    level: config.log.level,
    redactor,
    ...(options.logDestination ? { destination: options.logDestination } : {}),
  });
  if (options.ownProcess) {
    logProcessWarnings(log);
    exitOnUncaughtErrors(log);
  }
  // A changed key lifts the hold of objects a refused key stopped (wired once the
  // manager exists; the first read at start is no change).
  let onKeyChange: (what?: string) => void = () => {};
  const apiKey = apiKeyReader(config, { env, onChange: () => onKeyChange(), redactor });
  await checkApiKey(apiKey, config);

  const kubeConfig = await loadKubeConfig({
    ...(options.kubeconfig ? { kubeconfig: options.kubeconfig } : {}),
    ...(options.context !== undefined ? { context: options.context } : {}),
    ...(options.serviceAccountDir ? { serviceAccountDir: options.serviceAccountDir } : {}),
    env,
    log: log.child({ component: "kubeconfig" }),
  });

  const metrics = new RuntimeMetrics();
  // The service and the object storage take HTTPS_PROXY... as the API server does.
  const proxyFor = environmentProxy(env);
  // Every call (service, object storage) stops unsent once the Lease may have passed on.
  const fence = new LeaseFence();
  const mayCall = fence.mayAct;
  const defaultService = (options.serviceClientFactory ?? createServiceClient)({
    config,
    apiKey,
    metrics: metrics.serviceCallMetrics(),
    log,
    proxyFor,
    mayCall,
  });
  // Each object's calls go to its connection (ServiceConnection, else this default one);
  // S3 credentials are registered as they are read, as the API key is.
  const defaultStorage = defaultObjectStorage(config, env, redactor, proxyFor);
  // A proxy the object storage's calls cannot take stops the start, as the service's does.
  if (defaultStorage) proxyOptionsFor("the object storage", defaultStorage.endpoint, proxyFor);
  const connections = new ServiceConnections({
    defaultClient: defaultService,
    ...(defaultStorage ? { defaultObjectStorage: defaultStorage } : {}),
    secretNamespace: config.connections.secretNamespace,
    redactor,
    proxyFor,
    mayCall,
    webIdentity: connectionWebIdentityOptions(env, config.objectStorage),
    newClient: (settings) =>
      connectionClient(config, settings, {
        metrics,
        log,
        proxyFor,
        mayCall,
      }),
  });
  const le = config.leaderElection;
  // Each operator (a shard, or the unsharded one) watches only its own objects of the
  // kinds users create, and whole what it only reads (Secrets, ServiceConnections...).
  const sharded = new Set(allCrds.filter((c) => c.remote !== "none").map((c) => c.kind));
  const selector = shardSelector(config.shardKey);
  // Each connection (the default one included) is a flow: the workers and the Kubernetes
  // write budget go to the flows in turn, so one account's backlog holds no other's objects.
  const connectionOf = connectionMetricLabel(connections);
  const manager = new Manager({
    kubeConfig,
    log,
    redactor,
    metrics,
    namespaces: config.watchNamespaces,
    watchSelector: (res) => (res.group === GROUP && sharded.has(res.kind) ? selector : undefined),
    flowOf: connectionOf,
    kubeRateLimit: {
      qps: config.kube.qps,
      burst: config.kube.burst,
      total: { qps: config.kube.totalQps, burst: config.kube.totalBurst },
    },
    kubeMaxInFlight: config.kube.maxInFlight,
    informer: { watchdogMs: config.kube.watchdogMs },
    concurrency: config.concurrency.default,
    backoff: config.backoff,
    holdBackoff: config.holdBackoff,
    resyncPeriodMs: config.resyncPeriodMs,
    resyncJitter: config.resyncJitter,
    reconcileTimeoutMs: config.reconcileTimeoutMs,
    cacheSyncTimeoutMs: config.cacheSyncTimeoutMs,
    shutdownTimeoutMs: config.shutdownTimeoutMs,
    fence,
    server: { port: config.server.port, host: config.server.host },
    // A standby calls the service nothing: the operations are probed once it leads.
    onLeading: () => reportServiceOperations(defaultService, metrics, log),
    ...(le.enabled && le.leaseNamespace
      ? {
          leaderElection: {
            leaseName: shardLeaseName(le.leaseName, config.shardKey),
            leaseNamespace: le.leaseNamespace,
            ...(env.POD_NAME
              ? { identity: `${env.POD_NAME}_${Math.random().toString(36).slice(2, 8)}` }
              : {}),
            leaseDurationMs: le.leaseDurationMs,
            renewDeadlineMs: le.renewDeadlineMs,
            retryPeriodMs: le.retryPeriodMs,
          },
        }
      : {}),
  });
  const started: string[] = [];
  const reconciledKinds: ResourceDescriptor[] = [];
  for (const factory of options.controllerFactories ?? controllers) {
    const def = factory({ config, connections, log });
    // A controller off in this configuration (e.g. TrainingJob exposure) is not started.
    if (!def) continue;
    manager.add({ ...def, concurrency: def.concurrency ?? concurrencyFor(config, def.name) });
    started.push(def.name);
    // Object health counts each of the operator's kinds once (several controllers may
    // reconcile one kind, e.g. TrainingJob exposure).
    const kind = def.primary.kind;
    if (allCrds.some((c) => c.kind === kind) && !reconciledKinds.some((k) => k.kind === kind)) {
      reconciledKinds.push(def.primary);
    }
  }

  log.info(
    {
      baseUrl: config.service.baseUrl,
      watchNamespaces: config.watchNamespaces,
      shard: config.shardKey ?? null,
      leaderElection: le.enabled,
      controllers: started,
    },
    "starting aidc-operator",
  );
  connections.attach(manager.cache);
  manager.exportResourceHealth({ kinds: reconciledKinds, connectionOf, reasons: REASONS });
  // A connection whose spec or Secret changed: its objects try again (holds lifted).
  connections.onChanged((name) => {
    log.info({ connection: name }, "a service connection changed; retrying its objects");
    manager.retryMatching((obj) => connections.chosenName(obj) === name);
  });
  await manager.start();
  options.onStarted?.(manager);
  // A rotated default API key or S3 credentials lift the holds (a 403 waits for new ones)
  // of its objects. The key's reader tells the client each key: requests do not ask.
  onKeyChange = (what = "the API key") => {
    log.info(`${what} changed; retrying every object of the default connection`);
    manager.retryMatching((obj) => connections.chosenName(obj) === undefined);
  };
  const stopWatching = apiKey.watch((key) => defaultService.useApiKey(key));
  const stopS3Watch = defaultStorage?.watch?.(() => onKeyChange("the S3 credentials"));

  const stopped = await Promise.race([
    (options.stopSignal ?? waitForSignal()).then(() => "signal" as const),
    manager.done.then(
      () => "stopped" as const,
      (err: Error) => err,
    ),
  ]);
  stopWatching();
  stopS3Watch?.();
  connections.close();
  if (stopped instanceof Error) {
    log.error({ err: stopped }, "the manager failed; exiting so that the pod restarts");
  } else {
    log.info("shutting down");
    await manager.stop();
  }
  // The caller exits the process, which drops the last lines while they are written.
  await logWritten(log);
  return stopped instanceof Error ? 1 : 0;
}

/** Registers `aidc-operator run`, with one flag per config setting of SETTINGS. */
export function registerRunCommand(program: Command): void {
  const cmd = program
    .command("run")
    .description("run the operator: controllers, leader election, /metrics, /healthz, /readyz")
    .option("--config <file>", "operator config file (YAML or JSON); also $AIDC_CONFIG")
    .option("--kubeconfig <file>", `kubeconfig (default: ${KUBECONFIG_SEARCH})`)
    .option("--context <name>", "kubeconfig context to use (default: its current context)");
  for (const s of SETTINGS) {
    if (s.type === "boolean") {
      cmd.option(`--${s.flag}`, `${s.description} ($${s.env})`);
      cmd.option(`--no-${s.flag}`, `turn off --${s.flag}`);
    } else {
      cmd.option(`--${s.flag} <value>`, `${s.description} ($${s.env})`);
    }
  }
  cmd.action(async (opts: Record<string, string | boolean | undefined>) => {
    const flags: Record<string, string | boolean | undefined> = {};
    for (const s of SETTINGS) flags[s.flag] = opts[camel(s.flag)];
    const code = await runOperator({
      ...(typeof opts.config === "string" ? { configFile: opts.config } : {}),
      ...(typeof opts.kubeconfig === "string" ? { kubeconfig: opts.kubeconfig } : {}),
      ...(typeof opts.context === "string" ? { context: opts.context } : {}),
      flags,
      ownProcess: true,
    });
    // Stopped (the log written, the Lease released or given up): the process ends now,
    // not when requests a partitioned API server never answers time out (60 s), past
    // the pod's grace period.
    process.exit(code);
  });
}

/** commander's attribute name of a flag: `lease-name` → `leaseName`. */
function camel(flag: string): string {
  return flag.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
}
