/**
 * The operator in-process for integration tests: a `Manager` with the given
 * controllers against the test control plane (kubeconfig from `inject("kubeconfigPath")`),
 * a `ServiceClient` pointed at an in-process emulator, short poll intervals, no server,
 * no leader election.
 *
 * ```ts
 * const op = await startTestOperator({ controllers: [nasVolumeController], namespaces: [ns] });
 * // ... kubectl-like writes with op.kube, assertions with op.admin.requests() ...
 * await op.stop();
 * ```
 *
 * Watch only the test's own namespace(s): several test files share one control plane.
 * Pass `emulator` to run a second operator (a "restart") against the same service.
 */
import type { Logger } from "pino";
import type { z } from "zod";
import { defaultObjectStorage } from "../../src/config/object-storage.js";
import { type OperatorConfig, operatorConfigSchema } from "../../src/config/schema.js";
import { connectionClient } from "../../src/controllers/connections/client.js";
import { ServiceConnections } from "../../src/controllers/connections/registry.js";
import type { ControllerFactory } from "../../src/controllers/index.js";
import { EmulatorAdmin } from "../../src/emulator/admin-client.js";
import {
  type EmulatorOptions,
  type RunningEmulator,
  startEmulator,
} from "../../src/emulator/server.js";
import { KubeClient } from "../../src/runtime/kube.js";
import { createLogger } from "../../src/runtime/logging.js";
import { Manager } from "../../src/runtime/manager.js";
import type { ServiceRequestInfo } from "../../src/runtime/metrics.js";
import { SecretRedactor } from "../../src/runtime/outbound-guards.js";
import { ServiceAccount } from "../../src/service/account.js";
import type { CallContext } from "../../src/service/call-context.js";
import { ServiceClient, type ServiceClientOptions } from "../../src/service/client.js";
import type { OperationArgs } from "../../src/service/operation-caller.js";
import { installCrds } from "./crds.js";
import { adminKubeConfig } from "./kube.js";

/** The API key of the test emulator. */
export const TEST_API_KEY = "operator-test-key-0123456789abcdef";

/** The `data` the emulated service answers to GET `path`, as it writes it. */
export async function wireData(
  emulator: RunningEmulator,
  path: string,
): Promise<Record<string, unknown>> {
  const res = await fetch(`${emulator.url}${path}`, {
    headers: { Authorization: `Bearer ${TEST_API_KEY}` },
  });
  return ((await res.json()) as { data: Record<string, unknown> }).data;
}

/** A `makeService` whose account runs each call through `around`, which sends it with `send`. */
function intercepting(
  around: <T>(operation: string, send: () => Promise<T>) => Promise<T>,
): (options: ServiceClientOptions) => ServiceClient {
  class InterceptingAccount extends ServiceAccount {
    override request<T>(
      operation: string,
      args: OperationArgs,
      schema: z.ZodType<T>,
      context: CallContext,
    ): Promise<T> {
      return around(operation, () => super.request(operation, args, schema, context));
    }
  }
  return (options) => new ServiceClient(new InterceptingAccount(options));
}

/**
 * A `makeService` whose account, once the service answered operation `name`, calls
 * `died()` and never returns that call: the operator "dies" right after the service
 * acted, before it writes anything about it.
 */
export function diesAfter(
  name: string,
  died: () => void,
): (options: ServiceClientOptions) => ServiceClient {
  return intercepting(async (operation, send) => {
    const answer = await send();
    if (operation !== name) return answer;
    died();
    return new Promise(() => undefined);
  });
}

/** A service client whose first call of one operation waits until the test lets it go. */
export interface HeldOperation {
  /** The `makeService` to pass to {@link startTestOperator}. */
  makeService: (options: ServiceClientOptions) => ServiceClient;
  /** Resolves once the first call of the operation is held (before it is sent). */
  held: Promise<void>;
  /** Sends the held call; its answer then reaches the operator as usual. */
  release(): void;
}

/**
 * A `makeService` whose account holds the first call of operation `name` before it is
 * sent, until `release()`: the reconcile awaiting it stands still at a known point, and
 * the test acts meanwhile. Later calls of `name` pass at once.
 */
export function holdsFirst(name: string): HeldOperation {
  let onHeld: () => void = () => undefined;
  const held = new Promise<void>((resolve) => {
    onHeld = resolve;
  });
  let release: () => void = () => undefined;
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  let first = true;
  const makeService = intercepting(async (operation, send) => {
    if (operation === name && first) {
      first = false;
      onHeld();
      await released;
    }
    return send();
  });
  return { makeService, held, release };
}

/** Options of {@link startTestOperator}. */
export interface TestOperatorOptions {
  /** The controller factories to run (as in src/controllers/index.ts). */
  controllers: ControllerFactory[];
  /** Namespaces to watch; default all (prefer the test's own). */
  namespaces?: string[];
  /** Poll interval of every kind. Default 500 ms. */
  pollIntervalMs?: number;
  /** Extra config input (merged over the test defaults before validation). */
  config?: Record<string, unknown>;
  /** An emulator to use instead of starting one (not stopped by `stop()`). */
  emulator?: RunningEmulator;
  /** Options of the emulator started here. Default subscription delay 300 ms. */
  emulatorOptions?: Partial<EmulatorOptions>;
  /** Options of the service client (e.g. `endpoints` to enable deletes). */
  service?: Partial<ServiceClientOptions>;
  /** Builds the service client (e.g. one that simulates a crash: {@link diesAfter}); default `new ServiceClient`. */
  makeService?: (options: ServiceClientOptions) => ServiceClient;
  /** Every service call made with a ServiceConnection's client (labelled `connection`). */
  onConnectionRequest?: (info: ServiceRequestInfo) => void;
  /** Bound for in-flight reconciles at `stop()`. Default 2 s. */
  shutdownTimeoutMs?: number;
  /**
   * The test stops this operator mid-create (e.g. {@link holdsFirst}): its reconciles and
   * requests time out after 2 s and 1 s, so the marker it leaves bounds its create to 3 s
   * and the next operator's lookup ends soon after the list visibility window.
   */
  stopsMidCreate?: boolean;
  /** The operator's own KubeConfig (a front of the API server); default the admin's. */
  operatorKubeConfig?: ReturnType<typeof adminKubeConfig>;
  /** Logger; default silent (set `AIDC_TEST_LOG=debug` to see the operator's lines). */
  log?: Logger;
  /**
   * The redactor that keeps the operator's key, as `aidc-operator run`'s does;
   * pass the one a `log` of the test's own uses. Default: a new one.
   */
  redactor?: SecretRedactor;
}

/** A running test operator. */
export interface TestOperator {
  manager: Manager;
  /**
   * A Kubernetes client of the test's own, for what a user would do with kubectl. Not
   * the operator's client: the operator ignores the watch echo of its own writes, so
   * a user change made through `manager.kube` would go unnoticed.
   */
  kube: KubeClient;
  /** The default connection's client (the test emulator, its default account). */
  service: ServiceClient;
  /** The connections (ServiceConnection objects and the default one). */
  connections: ServiceConnections;
  emulator: RunningEmulator;
  admin: EmulatorAdmin;
  config: OperatorConfig;
  /** Stops the manager, closes the client, and stops the emulator if started here. */
  stop(): Promise<void>;
}

/**
 * Installs the CRDs (idempotent), starts (or reuses) an emulator, and starts a Manager
 * with `controllers`, each built with `{ config, service, log }` as `aidc-operator run`
 * does. Resolves once the manager started (its caches sync in the background).
 */
export async function startTestOperator(options: TestOperatorOptions): Promise<TestOperator> {
  const kubeConfig = adminKubeConfig();
  await installCrds(kubeConfig);
  const ownEmulator = options.emulator === undefined;
  const emulator =
    options.emulator ??
    (await startEmulator({
      subscriptionDelayMs: 300,
      ...options.emulatorOptions,
      apiKey: options.emulatorOptions?.apiKey ?? TEST_API_KEY,
    }));
  const apiKey = options.emulatorOptions?.apiKey ?? TEST_API_KEY;
  const poll = options.pollIntervalMs ?? 500;
  const parsed = operatorConfigSchema.parse({
    pollIntervalMs: { default: poll },
    service: { baseUrl: emulator.url, allowInsecureHttp: true, timeoutMs: 5_000, rateLimit: null },
    backoff: { baseMs: 100, maxMs: 2_000 },
    resyncPeriodMs: 0,
    // Most tests bind to seeded resources (CCI instances, NAS adopted by storageId): they
    // run as one tenant. The tenancy tests set their own adoption.namespaces.
    adoption: { namespaces: ["*"] },
    ...(options.namespaces ? { watchNamespaces: options.namespaces } : {}),
    ...options.config,
  });
  const config: OperatorConfig = options.stopsMidCreate
    ? { ...parsed, reconcileTimeoutMs: 2_000, service: { ...parsed.service, timeoutMs: 1_000 } }
    : parsed;
  const redactor = options.redactor ?? new SecretRedactor();
  const log =
    options.log ?? createLogger({ level: process.env.AIDC_TEST_LOG ?? "silent", redactor });
  redactor.keep("service.apiKey", apiKey);
  const serviceOptions: ServiceClientOptions = {
    baseUrl: emulator.url,
    apiKey: () => apiKey,
    rateLimit: null,
    retry: { maxAttempts: 3, baseDelayMs: 20, maxDelayMs: 100 },
    timeoutMs: options.stopsMidCreate ? config.service.timeoutMs : 5_000,
    subscriptionResult: config.service.subscriptionResult,
    createTaskFields: config.service.createTaskFields,
    logger: log.child({ component: "service" }),
    ...options.service,
  };
  const service = options.makeService?.(serviceOptions) ?? new ServiceClient(serviceOptions);
  // The default connection's object storage, from `config.objectStorage` (Buckets), its
  // keys registered with the redactor as `aidc-operator run` does.
  const defaultStorage = defaultObjectStorage(config, {}, redactor);
  // As `aidc-operator run`: each object's calls go to its connection, else `service`.
  const connections = new ServiceConnections({
    defaultClient: service,
    ...(defaultStorage ? { defaultObjectStorage: defaultStorage } : {}),
    secretNamespace: config.connections.secretNamespace,
    redactor,
    newClient: (settings) =>
      connectionClient(config, settings, {
        log,
        ...(options.onConnectionRequest ? { onRequest: options.onConnectionRequest } : {}),
      }),
  });
  const manager = new Manager({
    kubeConfig: options.operatorKubeConfig ?? kubeConfig,
    log,
    redactor,
    namespaces: config.watchNamespaces,
    // Two workers unless the test's config says: the machine running the suite is small.
    concurrency: options.config?.concurrency ? config.concurrency.default : 2,
    reconcileTimeoutMs: config.reconcileTimeoutMs,
    backoff: { baseMs: 100, maxMs: 2_000 },
    holdBackoff: config.holdBackoff,
    resyncPeriodMs: 0,
    shutdownTimeoutMs: options.shutdownTimeoutMs ?? 2_000,
    server: false,
  });
  for (const factory of options.controllers) {
    const def = factory({ config, connections, log });
    if (def) manager.add(def);
  }
  connections.attach(manager.cache);
  connections.onChanged((name) =>
    manager.retryMatching((obj) => connections.chosenName(obj) === name),
  );
  await manager.start();
  let stopped = false;
  return {
    manager,
    kube: new KubeClient(kubeConfig),
    service,
    connections,
    emulator,
    admin: new EmulatorAdmin(emulator.url),
    config,
    stop: async () => {
      if (stopped) return;
      stopped = true;
      await manager.stop();
      connections.close();
      service.close();
      if (ownEmulator) await emulator.stop();
    },
  };
}
