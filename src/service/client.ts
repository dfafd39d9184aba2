/**
 * The typed client of the Compute and Storage Service: one method per operation of the
 * endpoint table, each returning the operation's data parsed into a TypeScript type.
 * Every failure is a `ServiceError` subclass (see errors.ts). Controllers hold one
 * client per account (a ServiceConnection), call it through a view per reconcile
 * (`withCall`, call-context.ts), and never call fetch themselves.
 *
 * Built by composition: the account (account.ts) calls operations by name and knows
 * which the service answers (operation-availability.ts); each kind's operations live
 * in src/service/kinds/<kind>.ts and the methods here hand over to them. A kind whose
 * controller holds its own operations module calls the account through `request`
 * (kinds/blockvolume.ts, kinds/filesystem.ts).
 */
import type { z } from "zod";
import { ServiceAccount } from "./account.js";
import { type CallContext, UNSCOPED_CALLS } from "./call-context.js";
import type { ServiceClientOptions } from "./client-options.js";
import type { EndpointDefinition, EndpointName } from "./endpoints.js";
import { CciOperations } from "./kinds/cciinstance.js";
import { NasOperations } from "./kinds/nasvolume.js";
import { DEFAULT_CREATE_TASK_FIELDS, TrainingTaskOperations } from "./kinds/trainingjob.js";
import { TemplateOperations } from "./kinds/trainingtemplate.js";
import type { OperationAvailability, OperationVerdict } from "./operation-availability.js";
import type { OperationArgs, OperationCaller, OperationState } from "./operation-caller.js";
import type { CciListQuery, SaveCciImageRequest } from "./schemas/cci.js";
import type {
  NasAvailabilityQuery,
  NasListQuery,
  ScaleNasRequest,
  SubscribeNasRequest,
} from "./schemas/nas.js";
import type { OpenPodPortRequest } from "./schemas/pods.js";
import type { TemplateListQuery, TrainingTemplateInput } from "./schemas/template.js";
import type { CreateTrainingTaskRequest, TrainingTaskListQuery } from "./schemas/training.js";

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
  // The kinds' operations of this view, each made at its first call (a view per reconcile).
  private nasOps?: NasOperations;
  private taskOps?: TrainingTaskOperations;
  private templateOps?: TemplateOperations;
  private cciOps?: CciOperations;

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
  }

  private get nas(): NasOperations {
    this.nasOps ??= new NasOperations(this.account.operationsContext(this));
    return this.nasOps;
  }

  private get tasks(): TrainingTaskOperations {
    this.taskOps ??= new TrainingTaskOperations(this.account.operationsContext(this), {
      ...DEFAULT_CREATE_TASK_FIELDS,
      ...this.account.options.createTaskFields,
    });
    return this.taskOps;
  }

  private get templates(): TemplateOperations {
    this.templateOps ??= new TemplateOperations(this.account.operationsContext(this));
    return this.templateOps;
  }

  private get cci(): CciOperations {
    this.cciOps ??= new CciOperations(this);
    return this.cciOps;
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
    return this.account.request(name, args, schema, this.context);
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
    return this.account.requireOperations(names, purpose, this.context);
  }

  /** Probes the assumed read operations once (`OperationProbes.probeAssumedOperations`). */
  probeAssumedOperations(): Promise<Partial<Record<EndpointName, OperationVerdict>>> {
    return this.account.probes.probeAssumedOperations();
  }

  /** Closes idle keep-alive connections; the client stays usable. */
  close(): void {
    this.account.transport.close();
  }

  // --- NAS storage and its products: NasOperations (kinds/nasvolume.ts) -------------

  listNasProducts(aidcId?: number) {
    return this.nas.products(aidcId);
  }
  isNasProductAvailable(q: NasAvailabilityQuery) {
    return this.nas.isProductAvailable(q);
  }
  subscribeNas(req: SubscribeNasRequest) {
    return this.nas.subscribe(req);
  }
  getNasSubscriptionResult(key: string) {
    return this.nas.subscriptionResult(key);
  }
  scaleNas(id: string, req: ScaleNasRequest) {
    return this.nas.scale(id, req);
  }
  updateNasMountPath(id: string, mountPath: string) {
    return this.nas.updateMountPath(id, mountPath);
  }
  listNas(query: NasListQuery = {}) {
    return this.nas.page(query);
  }
  iterateNas(query: Omit<NasListQuery, "pageNo"> = {}) {
    return this.nas.iterate(query);
  }
  listNasIds() {
    return this.nas.listIds();
  }
  nasListSnapshot(maxAgeMs: number) {
    return this.nas.listSnapshot(maxAgeMs);
  }
  getNas(id: string) {
    return this.nas.get(id);
  }
  deleteNas(id: string) {
    return this.nas.delete(id);
  }
  findNasIdsByClientToken(token: string, name?: string) {
    return this.nas.findIdsByClientToken(token, name);
  }
  provesNasTokenAbsent(token: string) {
    return this.nas.provesTokenAbsent(token);
  }

  // --- training tasks, pods and products: TrainingTaskOperations (kinds/trainingjob.ts)

  listTrainingProducts(aidcId?: number) {
    return this.tasks.products(aidcId);
  }
  createTrainingTask(req: CreateTrainingTaskRequest) {
    return this.tasks.create(req);
  }
  getTrainingSubscriptionResult(key: string) {
    return this.tasks.subscriptionResult(key);
  }
  getTrainingTask(id: string) {
    return this.tasks.get(id);
  }
  updateTrainingTaskDesc(id: string, desc: string) {
    return this.tasks.updateDesc(id, desc);
  }
  saveTrainingTaskAsTemplate(id: string, t: { name: string; desc?: string }) {
    return this.tasks.saveAsTemplate(id, t);
  }
  listTrainingTaskStorages(id: string) {
    return this.tasks.storages(id);
  }
  listPods(taskId: string) {
    return this.tasks.pods(taskId);
  }
  getPodResource(id: string, podName: string) {
    return this.tasks.podResource(id, podName);
  }
  listPodOpenPorts(id: string, podName: string) {
    return this.tasks.podOpenPorts(id, podName);
  }
  openPodPort(id: string, podName: string, req: OpenPodPortRequest) {
    return this.tasks.openPort(id, podName, req);
  }
  closePodPort(id: string, podName: string, port: number) {
    return this.tasks.closePort(id, podName, port);
  }
  listTrainingTasks(query: TrainingTaskListQuery = {}) {
    return this.tasks.page(query);
  }
  iterateTrainingTasks(query: Omit<TrainingTaskListQuery, "pageNo"> = {}) {
    return this.tasks.iterate(query);
  }
  listTrainingTaskIds() {
    return this.tasks.listIds();
  }
  taskListSnapshot(maxAgeMs: number) {
    return this.tasks.listSnapshot(maxAgeMs);
  }
  deleteTrainingTask(id: string) {
    return this.tasks.delete(id);
  }
  findTrainingTaskIdsByClientToken(token: string, name?: string) {
    return this.tasks.findIdsByClientToken(token, name);
  }

  // --- templates: TemplateOperations (kinds/trainingtemplate.ts) ---------------------

  createTemplate(t: TrainingTemplateInput) {
    return this.templates.create(t);
  }
  updateTemplate(id: string, t: TrainingTemplateInput) {
    return this.templates.update(id, t);
  }
  listTemplates(query: TemplateListQuery = {}) {
    return this.templates.page(query);
  }
  iterateTemplates(query: Omit<TemplateListQuery, "pageNo"> = {}) {
    return this.templates.iterate(query);
  }
  templateListSnapshot(maxAgeMs: number) {
    return this.templates.listSnapshot(maxAgeMs);
  }
  deleteTemplate(id: string) {
    return this.templates.delete(id);
  }

  // --- CCI instances: CciOperations (kinds/cciinstance.ts) ---------------------------

  listCci(query: CciListQuery = {}) {
    return this.cci.page(query);
  }
  iterateCci(query: Omit<CciListQuery, "pageNo"> = {}) {
    return this.cci.iterate(query);
  }
  getCci(id: string) {
    return this.cci.get(id);
  }
  getCciErrorDetails(id: string) {
    return this.cci.errorDetails(id);
  }
  saveCciImage(id: string, req: SaveCciImageRequest) {
    return this.cci.saveImage(id, req);
  }
}
