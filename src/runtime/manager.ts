import { hostname } from "node:os";
import { InformerCache } from "./cache.js";
import { type CacheReport, notSynced, reportCache } from "./cache-sync.js";
import type { ControllerDefinition } from "./controller.js";
import { RunningController } from "./controller-runner.js";
import {
  DEFAULT_CACHE_SYNC_TIMEOUT_MS,
  DEFAULT_HEALTH_PORT,
  DEFAULT_SHUTDOWN_TIMEOUT_MS,
} from "./defaults.js";
import { EventRecorder } from "./events.js";
import { HealthServer } from "./health.js";
import { KubeClient } from "./kube.js";
import { LeaderElector } from "./leader-election.js";
import { controllerRuntimeOf, type ManagerOptions } from "./manager-options.js";
import { RuntimeMetrics } from "./metrics.js";
import { LeaseFence } from "./outbound-guards.js";
import { mergeRules, type PolicyRule, RUNTIME_PERMISSIONS } from "./permissions.js";
import { type Clock, type KubeObject, systemClock, withDeadline } from "./resource.js";
import { ResourceHealth, type ResourceHealthSource } from "./resource-health.js";
import { StopBudget } from "./stop-budget.js";

/**
 * Wires the runtime: one Kubernetes client, the informer cache (started on every
 * replica, so a new leader starts warm), the controllers (run only by the leader),
 * leader election, Events, metrics and the /metrics, /healthz, /readyz server.
 *
 * `start()` returns once the server listens; `done` settles when the manager stopped:
 * it resolves after {@link stop} and rejects when leadership was lost (the process
 * should then exit, as controller-runtime's does, and be restarted).
 */
export class Manager {
  readonly kube: KubeClient;
  readonly cache: InformerCache;
  readonly metrics: RuntimeMetrics;
  readonly events: EventRecorder;
  readonly identity: string;
  /** Settles when the manager has stopped; rejects on lost leadership. */
  readonly done: Promise<void>;
  private readonly controllers: RunningController[] = [];
  private readonly elector?: LeaderElector;
  private readonly server?: HealthServer;
  private readonly clock: Clock;
  private readonly apiHost: string;
  /** The health export, told whether this process runs the controllers. */
  private health: ResourceHealth | undefined;
  private controllersRunning = false;
  private stopping = false;
  /** Says for every kind what holds the cache back (cache-sync.ts); from the start. */
  private cacheReport?: CacheReport;
  private resolveDone!: () => void;
  private rejectDone!: (err: Error) => void;
  /** Port the server listens on, once started. */
  port = 0;

  constructor(private readonly options: ManagerOptions) {
    const server = options.kubeConfig.getCurrentCluster()?.server;
    this.apiHost = server ? new URL(server).host : "";
    this.clock = options.clock ?? systemClock;
    this.metrics = options.metrics ?? new RuntimeMetrics();
    const le = options.leaderElection;
    // Reconciles write nothing either once the Lease may have passed on.
    const fence = options.fence ?? (le ? new LeaseFence(this.clock) : undefined);
    const newClient = (limiter: string, rememberWrites = true) =>
      new KubeClient(options.kubeConfig, {
        ...(options.kubeRateLimit ? { rateLimit: options.kubeRateLimit } : {}),
        ...(options.kubeMaxInFlight ? { maxInFlight: options.kubeMaxInFlight } : {}),
        ...(options.redactor ? { redactor: options.redactor } : {}),
        ...(fence ? { mayWrite: fence.mayAct } : {}),
        metrics: this.metrics.kubeRequestMetrics(this.apiHost, limiter),
        rememberWrites,
      });
    this.kube = newClient("requests");
    this.cache = new InformerCache(this.kube, {
      ...(options.informer ?? {}),
      ...(options.namespaces ? { namespaces: options.namespaces } : {}),
      ...(options.watchSelector ? { watchSelector: options.watchSelector } : {}),
      log: options.log.child({ component: "informer" }),
      onWatchChange: () => this.cacheReport?.watchesChanged(),
    });
    this.identity = le?.identity ?? `${hostname()}_${Math.random().toString(36).slice(2, 10)}`;
    // Events go through a client of their own, with its own rate limiter (as
    // controller-runtime's recorder has its own clientset), so that a burst of Events
    // never delays a reconcile's reads and writes. Nobody asks whether an Event is this
    // process's own write, so that client remembers none.
    this.events = new EventRecorder(newClient("events", false), {
      controller: options.eventsController ?? "aidc.io/aidc-operator",
      instance: this.identity,
      clock: this.clock,
      log: options.log.child({ component: "events" }),
      dropped: this.metrics.eventsDropped,
    });
    this.done = new Promise<void>((resolve, reject) => {
      this.resolveDone = resolve;
      this.rejectDone = reject;
    });
    // A rejection nobody awaits must not crash the process before run() looks at it.
    this.done.catch(() => undefined);
    if (le) {
      this.elector = new LeaderElector(this.kube, {
        ...le,
        identity: this.identity,
        clock: this.clock,
        ...(fence ? { fence } : {}),
        log: options.log.child({ component: "leader-election" }),
        onStartedLeading: () => {
          this.launchControllers();
        },
        onStoppedLeading: () => this.leadershipLost(),
        onLeaderChange: (leader) =>
          this.metrics.leaderStatus.set({ name: le.leaseName }, leader ? 1 : 0),
      });
    }
    if (options.server !== false) {
      this.server = new HealthServer({
        port: options.server?.port ?? DEFAULT_HEALTH_PORT,
        ...(options.server?.host ? { host: options.server.host } : {}),
        metrics: this.metrics,
        readiness: {
          "informer-sync": () => notSynced(this.cache),
          controllers: () =>
            this.stopping
              ? "shutting down"
              : this.isLeader() && !this.controllersRunning
                ? "leader, controllers starting"
                : undefined,
        },
      });
    }
  }

  /** Registers a controller; before {@link start}. */
  add(definition: ControllerDefinition): this {
    if (this.controllers.some((c) => c.definition.name === definition.name)) {
      throw new Error(`a controller named ${definition.name} is already registered`);
    }
    const rt = controllerRuntimeOf(this.options, {
      kube: this.kube,
      cache: this.cache,
      clock: this.clock,
      events: this.events,
      metrics: this.metrics,
    });
    this.cache.informerFor(definition.primary);
    for (const w of definition.watches) this.cache.informerFor(w.resource, w.namespaces);
    for (const i of definition.indexes) this.cache.addIndex(i.resource, i.name, i.fn);
    this.controllers.push(new RunningController(definition, rt));
    return this;
  }

  /**
   * Exports the health of the objects of `source.kinds` from the cache as metrics
   * (resource-health.ts); while this process runs the controllers only, so that
   * replicas do not count the same objects twice. Call it after {@link add}.
   */
  exportResourceHealth(source: ResourceHealthSource): void {
    for (const kind of source.kinds) this.cache.informerFor(kind);
    const health = new ResourceHealth(source, this.cache, this.metrics, () =>
      this.clock.now().getTime(),
    );
    health.active = this.controllersRunning && this.isLeader();
    this.health = health;
    this.metrics.exportResourceHealth(() => health.snapshot());
  }

  /** RBAC rules of every registered controller plus the runtime's own (Events). */
  permissions(): PolicyRule[] {
    return mergeRules(
      RUNTIME_PERMISSIONS,
      ...this.controllers.map((c) => c.definition.permissions),
    );
  }

  /** Starts the server, the informers and (when elected, or without election) the controllers. */
  async start(): Promise<void> {
    if (this.server) this.port = await this.server.start();
    this.cache.start();
    this.cacheReport = reportCache(this.cache, {
      log: this.options.log,
      timeoutMs: this.options.cacheSyncTimeoutMs ?? DEFAULT_CACHE_SYNC_TIMEOUT_MS,
      onTimeout: (message) => void this.fail(message, { releaseLease: true }),
    });
    if (this.elector) this.elector.start();
    else this.launchControllers();
    this.options.log.info(
      { identity: this.identity, leaderElection: Boolean(this.elector), port: this.port },
      "manager started",
    );
  }

  /** True when this process runs the controllers (always, without leader election). */
  isLeader(): boolean {
    return this.elector ? this.elector.isLeader() : !this.stopping;
  }

  /** True when controllers are running in this process. */
  get running(): boolean {
    return this.controllersRunning;
  }

  /** Reconciles every key again, including keys held by a terminal error (e.g. the API key changed). */
  retryAll(): void {
    for (const c of this.controllers) c.requeueAll(true);
  }

  /**
   * Reconciles again, held by a terminal error or not, every cached object of every
   * controller for which `matches` is true (e.g. the objects of one connection whose
   * key changed).
   */
  retryMatching(matches: (obj: KubeObject) => boolean): void {
    for (const c of this.controllers) c.requeueAll(true, matches);
  }

  /**
   * Graceful shutdown, all within `shutdownTimeoutMs`: stop taking work, let in-flight
   * reconciles finish (then abort them), flush Events, release the Lease (unless
   * `releaseLease: false`, which simulates a killed process), stop informers and the server.
   */
  async stop(options: { releaseLease?: boolean } = {}): Promise<void> {
    if (this.stopping) return this.done.catch(() => undefined);
    this.stopping = true;
    if (this.health) this.health.active = false;
    this.options.log.info("manager stopping");
    await this.shutdown(options.releaseLease ?? true);
    this.resolveDone();
  }

  private launchControllers(): void {
    this.startControllers().catch((err: unknown) => {
      void this.fail(`could not start the controllers: ${String(err)}`);
    });
  }

  private async startControllers(): Promise<void> {
    await this.cache.waitForSync();
    if (this.stopping || this.controllersRunning || !this.isLeader()) return;
    for (const c of this.controllers) c.start();
    this.controllersRunning = true;
    this.options.onLeading?.();
    if (this.health) this.health.active = true;
  }

  /**
   * Another process may lead from now on, so the reconciles in flight are aborted at once,
   * not drained (controller-runtime skips its graceful shutdown then), also when a stop
   * is already under way; synchronously, so that the call that found the Lease lapsed
   * (LeaseFence) ends its reconcile as aborted, not failed.
   */
  private leadershipLost(): void {
    const message = "leadership lost: could not renew the lease in time";
    for (const c of this.controllers) c.abortReconciles(message);
    if (!this.stopping) void this.fail(message, { drain: false });
  }

  /**
   * Stops and rejects `done`: the process should exit. The Lease is released only with
   * `releaseLease` (a lost one is not this process's to release); `drain: false` aborts
   * the reconciles in flight at once.
   */
  private async fail(
    message: string,
    { releaseLease = false, drain = true }: { releaseLease?: boolean; drain?: boolean } = {},
  ): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    if (this.health) this.health.active = false;
    this.options.log.error(message);
    await this.shutdown(releaseLease, drain);
    this.rejectDone(new Error(message));
  }

  /** The stop's stages, all within one budget (stop-budget.ts). */
  private async shutdown(releaseLease: boolean, drain = true): Promise<void> {
    this.cacheReport?.end();
    const budget = new StopBudget(this.options.shutdownTimeoutMs ?? DEFAULT_SHUTDOWN_TIMEOUT_MS);
    const { events, lease, informers } = budget.shares;
    const leaseShare = this.elector ? lease : 0;
    // Controllers still waiting for the cache sync check `stopping` before starting.
    const drainMs = drain ? budget.left(events + leaseShare + informers) : 0;
    await Promise.all(this.controllers.map((c) => c.stop(drainMs)));
    this.controllersRunning = false;
    const flushMs = Math.min(events, budget.left(leaseShare + informers));
    await withDeadline(this.events.flush(), flushMs, () => undefined);
    await this.elector?.stop({ release: releaseLease, withinMs: budget.left(informers) });
    await withDeadline(this.cache.stop(), budget.left(), () => {
      this.options.log.warn("informers still stopping at the end of the stop's budget");
    });
    await this.server?.stop();
    this.options.log.info("manager stopped");
  }
}
