/**
 * The typed client of the Compute and Storage Service: one method per operation of the
 * endpoint table, each returning the operation's data parsed into a TypeScript type.
 * Every failure is a `ServiceError` subclass (see errors.ts). The operator holds one
 * client per account (a ServiceConnection); nothing calls fetch itself.
 *
 * A client is a view of its account (account.ts) under one call context
 * (call-context.ts; another view: `withCall`). Its `calls` make the calls and hold each
 * kind's operations module (src/service/kinds/<kind>.ts); the methods here hand over to
 * them, for the CLI, the emulator's harness and tests. The controllers call a kind's
 * module directly, through the account's calls for their reconcile
 * (`client.account.withCall(context)`: controllers/managed/run.ts, the CCI, catalog and
 * connection controllers).
 */
import type { z } from "zod";
import { type AccountCalls, ServiceAccount } from "./account.js";
import { type CallContext, UNSCOPED_CALLS } from "./call-context.js";
import type { ServiceClientOptions } from "./client-options.js";
import type { EndpointDefinition, EndpointName } from "./endpoints.js";
import type { CciListQuery, SaveCciImageRequest } from "./kinds/cciinstance.js";
import type {
  NasAvailabilityQuery,
  NasListQuery,
  ScaleNasRequest,
  SubscribeNasRequest,
} from "./kinds/nasvolume.js";
import type { CreateTrainingTaskRequest } from "./kinds/trainingjob.create.js";
import type { TrainingTaskListQuery } from "./kinds/trainingjob.js";
import type { OpenPodPortRequest } from "./kinds/trainingjob.pods.js";
import type { TemplateListQuery, TrainingTemplateInput } from "./kinds/trainingtemplate.js";
import type { OperationAvailability, OperationVerdict } from "./operation-availability.js";
import type { OperationArgs, OperationCaller, OperationState } from "./operation-caller.js";

export type { ServiceClientOptions } from "./client-options.js";

/**
 * The service API client of one account, as one piece of work calls it: every call of
 * this client is made under its {@link context} (routine or not, its abort signal).
 * `new ServiceClient(options)` makes the account and a view outside any reconcile;
 * {@link withCall} makes another view of the same account (same rate limit, caches and
 * snapshots) for one reconcile. See the module comment.
 */
export class ServiceClient implements OperationCaller {
  /** What every view of the account shares (its identity, for what callers remember). */
  readonly account: ServiceAccount;
  /** How this view's calls are made. */
  readonly context: CallContext;
  /** What this connection knows about which operations the service answers. */
  readonly operations: OperationAvailability;
  /** This view's calls, and each kind's operations module (`calls.nas`...). */
  readonly calls: AccountCalls;

  /**
   * A client of a new account from `options` (throws an Error when the endpoint
   * overrides are invalid: unknown name, bad path), or another view of `account`.
   */
  constructor(
    source: ServiceClientOptions | ServiceAccount,
    context: CallContext = UNSCOPED_CALLS,
  ) {
    const account = source instanceof ServiceAccount ? source : new ServiceAccount(source);
    this.account = account;
    this.context = context;
    this.operations = account.probes.operations;
    this.calls = account.withCall(context);
  }

  /**
   * A view of this account whose calls are made under `context` (one reconcile's), of
   * this client's own class (a subclass's overrides apply to every view).
   */
  withCall(context: CallContext): ServiceClient {
    const View = this.constructor as new (a: ServiceAccount, c: CallContext) => ServiceClient;
    return new View(this.account, context);
  }

  /**
   * Forgets the cached product catalogs and NAS availability answers (`catalogTtlMs`):
   * the next read asks the service (a refresh someone asked for).
   */
  forgetCatalogs(): void {
    this.account.catalog.forget();
  }

  // --- the account: operations by name, and which the service answers -------------

  /** Calls operation `name` of the endpoint table (`ServiceAccount.request`). */
  request<T>(name: string, args: OperationArgs, schema: z.ZodType<T>): Promise<T> {
    return this.calls.request(name, args, schema);
  }

  /** Returns `body` when `schema` accepts it, else throws `ServiceInvalidRequestError`. */
  checkedBody(name: string, schema: z.ZodType, body: unknown): unknown {
    return this.account.checkedBody(name, schema, body);
  }

  /** What is known of operation `name`, without a request. */
  operationState(name: string): OperationState {
    return this.account.probes.operationState(name);
  }

  /** Whether operation `name` is enabled; a disabled one throws `EndpointDisabledError`. */
  isEndpointEnabled(name: EndpointName): boolean {
    return this.account.endpoints[name] !== null;
  }

  /** The effective definition of `name`, or null when disabled. */
  endpoint(name: EndpointName): EndpointDefinition | null {
    return this.account.endpoints[name];
  }

  /** Asks the service whether it answers operation `name` (`OperationProbes.probeOperation`). */
  probeOperation(name: EndpointName): Promise<OperationVerdict> {
    return this.account.probes.probeOperation(name, this.context);
  }

  /** Resolves when every operation of `names` is answered (`ServiceAccount.requireOperations`). */
  requireOperations(names: readonly string[], purpose: string): Promise<void> {
    return this.calls.requireOperations(names, purpose);
  }

  /** Probes the assumed read operations once (`OperationProbes.probeAssumedOperations`). */
  probeAssumedOperations(): Promise<Partial<Record<EndpointName, OperationVerdict>>> {
    return this.account.probes.probeAssumedOperations();
  }

  /**
   * Sends `key` from the next call on instead of asking `apiKey`; undefined: asks again at
   * each attempt (`ServiceTransport.useApiKey`).
   */
  useApiKey(key: string | undefined): void {
    this.account.transport.useApiKey(key);
  }

  /** Closes idle keep-alive connections; the client stays usable. */
  close(): void {
    this.account.transport.close();
  }

  // --- NAS storage and its products: NasOperations (kinds/nasvolume.ts) -------------

  listNasProducts(aidcId?: number) {
    return this.calls.nas.products(aidcId);
  }
  isNasProductAvailable(q: NasAvailabilityQuery) {
    return this.calls.nas.isProductAvailable(q);
  }
  subscribeNas(req: SubscribeNasRequest) {
    return this.calls.nas.subscribe(req);
  }
  getNasSubscriptionResult(key: string) {
    return this.calls.nas.subscriptionResult(key);
  }
  scaleNas(id: string, req: ScaleNasRequest) {
    return this.calls.nas.scale(id, req);
  }
  updateNasMountPath(id: string, mountPath: string) {
    return this.calls.nas.updateMountPath(id, mountPath);
  }
  listNas(query: NasListQuery = {}) {
    return this.calls.nas.page(query);
  }
  iterateNas(query: Omit<NasListQuery, "pageNo"> = {}) {
    return this.calls.nas.iterate(query);
  }
  listNasIds() {
    return this.calls.nas.listIds();
  }
  nasListSnapshot(maxAgeMs: number) {
    return this.calls.nas.listSnapshot(maxAgeMs);
  }
  getNas(id: string) {
    return this.calls.nas.get(id);
  }
  deleteNas(id: string) {
    return this.calls.nas.delete(id);
  }
  findNasIdsByClientToken(token: string, name?: string) {
    return this.calls.nas.findIdsByClientToken(token, name);
  }
  provesNasTokenAbsent(token: string) {
    return this.calls.nas.provesTokenAbsent(token);
  }

  // --- training tasks, pods and products: TrainingTaskOperations (kinds/trainingjob.ts)

  listTrainingProducts(aidcId?: number) {
    return this.calls.tasks.products(aidcId);
  }
  createTrainingTask(req: CreateTrainingTaskRequest) {
    return this.calls.tasks.create(req);
  }
  getTrainingSubscriptionResult(key: string) {
    return this.calls.tasks.subscriptionResult(key);
  }
  getTrainingTask(id: string) {
    return this.calls.tasks.get(id);
  }
  updateTrainingTaskDesc(id: string, desc: string) {
    return this.calls.tasks.updateDesc(id, desc);
  }
  saveTrainingTaskAsTemplate(id: string, t: { name: string; desc?: string }) {
    return this.calls.tasks.saveAsTemplate(id, t);
  }
  listTrainingTaskStorages(id: string) {
    return this.calls.tasks.storages(id);
  }
  listPods(taskId: string) {
    return this.calls.pods.list(taskId);
  }
  getPodResource(id: string, podName: string) {
    return this.calls.pods.resource(id, podName);
  }
  listPodOpenPorts(id: string, podName: string) {
    return this.calls.pods.openPorts(id, podName);
  }
  openPodPort(id: string, podName: string, req: OpenPodPortRequest) {
    return this.calls.pods.openPort(id, podName, req);
  }
  closePodPort(id: string, podName: string, port: number) {
    return this.calls.pods.closePort(id, podName, port);
  }
  listTrainingTasks(query: TrainingTaskListQuery = {}) {
    return this.calls.tasks.page(query);
  }
  iterateTrainingTasks(query: Omit<TrainingTaskListQuery, "pageNo"> = {}) {
    return this.calls.tasks.iterate(query);
  }
  listTrainingTaskIds() {
    return this.calls.tasks.listIds();
  }
  taskListSnapshot(maxAgeMs: number) {
    return this.calls.tasks.listSnapshot(maxAgeMs);
  }
  deleteTrainingTask(id: string) {
    return this.calls.tasks.delete(id);
  }
  findTrainingTaskIdsByClientToken(token: string, name?: string) {
    return this.calls.tasks.findIdsByClientToken(token, name);
  }
  provesTrainingTaskTokenAbsent(token: string) {
    return this.calls.tasks.provesTokenAbsent(token);
  }

  // --- templates: TemplateOperations (kinds/trainingtemplate.ts) ---------------------

  createTemplate(t: TrainingTemplateInput) {
    return this.calls.templates.create(t);
  }
  updateTemplate(id: string, t: TrainingTemplateInput) {
    return this.calls.templates.update(id, t);
  }
  listTemplates(query: TemplateListQuery = {}) {
    return this.calls.templates.page(query);
  }
  iterateTemplates(query: Omit<TemplateListQuery, "pageNo"> = {}) {
    return this.calls.templates.iterate(query);
  }
  provesTemplateNameAbsent(name: string) {
    return this.calls.templates.provesNameAbsent(name);
  }
  templateListSnapshot(maxAgeMs: number) {
    return this.calls.templates.listSnapshot(maxAgeMs);
  }
  deleteTemplate(id: string) {
    return this.calls.templates.delete(id);
  }

  // --- CCI instances: CciOperations (kinds/cciinstance.ts) ---------------------------

  listCci(query: CciListQuery = {}) {
    return this.calls.cci.page(query);
  }
  iterateCci(query: Omit<CciListQuery, "pageNo"> = {}) {
    return this.calls.cci.iterate(query);
  }
  getCci(id: string) {
    return this.calls.cci.get(id);
  }
  getCciErrorDetails(id: string) {
    return this.calls.cci.errorDetails(id);
  }
  saveCciImage(id: string, req: SaveCciImageRequest) {
    return this.calls.cci.saveImage(id, req);
  }
}
