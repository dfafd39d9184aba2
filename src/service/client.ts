/**
 * The typed client of the Compute and Storage Service: one method per operation of the
 * endpoint table, each returning the operation's data parsed into a TypeScript type.
 * Every failure is a `ServiceError` subclass (see errors.ts). Controllers hold one
 * client, built from the operator configuration, and never call fetch themselves.
 */
import type { Logger } from "pino";
import { z } from "zod";
import { DEFAULT_RETRY_POLICY, type RetryPolicy } from "./backoff.js";
import { CLIENT_TOKEN_ENV, clientTokenInDescription } from "./client-token.js";
import {
  type EndpointDefinition,
  type EndpointName,
  type EndpointOverrides,
  resolveEndpointTable,
} from "./endpoints.js";
import { ServiceInvalidRequestError } from "./errors.js";
import { DEFAULT_ITERATION_PAGE_SIZE, paginate } from "./pagination.js";
import type { RateLimit, Sleep } from "./rate-limiter.js";
import {
  type JsonObject,
  jsonObjectBodySchema,
  type StorageObject,
  storageObjectSchema,
} from "./schemas/block-file-storage.js";
import {
  type CciErrorDetails,
  type CciInstance,
  type CciListQuery,
  cciErrorDetailsSchema,
  cciInstanceSchema,
  type SaveCciImageRequest,
  type SaveCciImageResult,
  saveCciImageBodySchema,
  saveCciImageResultSchema,
} from "./schemas/cci.js";
import { type Page, pageOf } from "./schemas/envelope.js";
import {
  type NasInstance,
  type NasListQuery,
  nasInstanceSchema,
  type ScaleNasRequest,
  type SubscribeNasRequest,
  scaleNasBodySchema,
  subscribeNasBodySchema,
  toSubscribeNasBody,
  updateNasMountPathBodySchema,
} from "./schemas/nas.js";
import {
  closePodPortBodySchema,
  type OpenPodPortRequest,
  type OpenPort,
  openPodPortBodySchema,
  openPodPortResultSchema,
  type PodOpenPorts,
  type PodResource,
  podOpenPortsSchema,
  podResourceSchema,
  type TrainingPod,
  trainingPodSchema,
} from "./schemas/pods.js";
import { describeIssues } from "./schemas/primitives.js";
import {
  type NasAvailabilityQuery,
  type NasProduct,
  nasAvailabilityBodySchema,
  nasAvailabilitySchema,
  nasProductSchema,
  type TrainingProduct,
  trainingProductSchema,
} from "./schemas/products.js";
import { type SubscriptionResult, subscriptionResultSchema } from "./schemas/subscription.js";
import {
  type TemplateListQuery,
  type TrainingTemplate,
  type TrainingTemplateInput,
  templateBodySchema,
  toTemplateBody,
  trainingTemplateSchema,
} from "./schemas/template.js";
import {
  type CreateTrainingTaskRequest,
  createTrainingTaskBodySchema,
  saveAsTemplateBodySchema,
  type TrainingTask,
  type TrainingTaskListQuery,
  toCreateTrainingTaskBody,
  trainingTaskSchema,
  updateTaskDescBodySchema,
} from "./schemas/training.js";
import { type CallArgs, type RequestObservation, ServiceTransport } from "./transport.js";

/** How a `ServiceClient` reaches and treats the service. */
export interface ServiceClientOptions {
  /** Base URL the endpoint paths are appended to, e.g. `https://api.example.com`. */
  baseUrl: string;
  /** Reads the API key for each request, so a rotated Secret takes effect at once. */
  apiKey: () => string | Promise<string>;
  /** Timeout per attempt, in ms. Default 10 000. */
  timeoutMs?: number;
  /** Retries of idempotent calls. Default 4 attempts, 200 ms doubling, at most 5 s. */
  retry?: RetryPolicy;
  /** Client-side token bucket; null turns it off. Default 50/s with a burst of 100. */
  rateLimit?: RateLimit | null;
  /** Endpoint overrides by name: `"/path"` or `"METHOD /path"` enables, null disables. */
  endpoints?: EndpointOverrides;
  /** Debug log per attempt (endpoint, path, status, duration); never headers or the key. */
  logger?: Logger;
  /** Called after every attempt, for metrics. */
  onRequest?: (e: RequestObservation) => void;
  /** Jitter source (tests). */
  random?: () => number;
  /** How waits happen (tests). */
  sleep?: Sleep;
}

/** Default client-side rate limit: the spec names none, this stays well clear of abuse. */
export const DEFAULT_RATE_LIMIT: RateLimit = { ratePerSecond: 50, burst: 100 };

/** Default timeout per attempt. */
export const DEFAULT_TIMEOUT_MS = 10_000;

const emptyData = z.unknown().transform((): void => undefined);
const subscriptionKeySchema = z.preprocess(
  (v) => (typeof v === "number" ? String(v) : v),
  z.string().min(1, "expected the subscription result key"),
);
const listOf = <T extends z.ZodType>(item: T) =>
  z.preprocess((v) => (v === null ? [] : v), z.array(item));

function validBody<T extends z.ZodType>(endpoint: string, schema: T, body: unknown): unknown {
  const parsed = schema.safeParse(body);
  if (!parsed.success) {
    throw new ServiceInvalidRequestError(
      `invalid ${endpoint} request: ${describeIssues(parsed.error, "request")}`,
      { endpoint },
    );
  }
  return body;
}

/** The service API client. See the module comment. */
export class ServiceClient {
  private readonly transport: ServiceTransport;
  private readonly endpoints: Record<EndpointName, EndpointDefinition | null>;

  /** Throws an Error when the endpoint overrides are invalid (unknown name, bad path). */
  constructor(options: ServiceClientOptions) {
    this.endpoints = resolveEndpointTable(options.endpoints);
    this.transport = new ServiceTransport({
      baseUrl: options.baseUrl,
      apiKey: options.apiKey,
      timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
      retry: options.retry ?? DEFAULT_RETRY_POLICY,
      rateLimit: options.rateLimit === undefined ? DEFAULT_RATE_LIMIT : options.rateLimit,
      endpoints: this.endpoints,
      logger: options.logger,
      onRequest: options.onRequest,
      ...(options.random ? { random: options.random } : {}),
      ...(options.sleep ? { sleep: options.sleep } : {}),
    });
  }

  /** Whether operation `name` is enabled; a disabled one throws `EndpointDisabledError`. */
  isEndpointEnabled(name: EndpointName): boolean {
    return this.transport.isEnabled(name);
  }

  /** The effective definition of `name`, or null when disabled. */
  endpoint(name: EndpointName): EndpointDefinition | null {
    return this.endpoints[name];
  }

  /** Closes idle keep-alive connections; the client stays usable. */
  close(): void {
    this.transport.close();
  }

  private call<T>(name: EndpointName, args: CallArgs, schema: z.ZodType<T>): Promise<T> {
    return this.transport.call(name, args, schema);
  }

  // --- training tasks ----------------------------------------------------------------

  /** Creates a task (asynchronous; never retried blindly). Returns the subscription result key. */
  createTrainingTask(req: CreateTrainingTaskRequest): Promise<string> {
    const body = validBody(
      "createTrainingTask",
      createTrainingTaskBodySchema,
      toCreateTrainingTaskBody(req),
    );
    return this.call("createTrainingTask", { body }, subscriptionKeySchema);
  }

  /** Reads a task's configuration and run information. */
  getTrainingTask(id: string): Promise<TrainingTask> {
    return this.call("getTrainingTask", { params: { id } }, trainingTaskSchema);
  }

  /** Replaces a task's description (nothing else changes). */
  updateTrainingTaskDesc(id: string, desc: string): Promise<void> {
    const body = validBody("updateTrainingTaskDesc", updateTaskDescBodySchema, { desc });
    return this.call("updateTrainingTaskDesc", { params: { id }, body }, emptyData);
  }

  /** Saves a task's configuration as a template named `name`. */
  saveTrainingTaskAsTemplate(id: string, t: { name: string; desc?: string }): Promise<void> {
    const body = validBody("saveTrainingTaskAsTemplate", saveAsTemplateBodySchema, t);
    return this.call("saveTrainingTaskAsTemplate", { params: { id }, body }, emptyData);
  }

  /** The NAS storages a task mounts. */
  listTrainingTaskStorages(id: string): Promise<NasInstance[]> {
    return this.call("listTrainingTaskStorages", { params: { id } }, listOf(nasInstanceSchema));
  }

  /** Containers and volumes of one pod of a task. */
  getPodResource(id: string, podName: string): Promise<PodResource> {
    return this.call("getPodResource", { params: { id, podName } }, podResourceSchema);
  }

  /** System and custom open ports of one pod. */
  listPodOpenPorts(id: string, podName: string): Promise<PodOpenPorts> {
    return this.call("listPodOpenPorts", { params: { id, podName } }, podOpenPortsSchema);
  }

  /** Opens a custom port (assumed endpoint); returns it when the answer says, else undefined. */
  openPodPort(id: string, podName: string, req: OpenPodPortRequest): Promise<OpenPort | undefined> {
    const body = validBody("openPodPort", openPodPortBodySchema, {
      port: req.port,
      protocol: req.protocol,
    });
    return this.call("openPodPort", { params: { id, podName }, body }, openPodPortResultSchema);
  }

  /** Closes a previously opened port of a pod. */
  closePodPort(id: string, podName: string, port: number): Promise<void> {
    const body = validBody("closePodPort", closePodPortBodySchema, { port });
    return this.call("closePodPort", { params: { id, podName }, body }, emptyData);
  }

  /** One page of the task list (assumed endpoint). */
  listTrainingTasks(query: TrainingTaskListQuery = {}): Promise<Page<TrainingTask>> {
    return this.call("listTrainingTasks", { query: { ...query } }, pageOf(trainingTaskSchema));
  }

  /** Every task matching `query`, page by page. */
  iterateTrainingTasks(
    query: Omit<TrainingTaskListQuery, "pageNo"> = {},
  ): AsyncGenerator<TrainingTask> {
    return paginate(
      (pageNo, pageSize) => this.listTrainingTasks({ ...query, pageNo, pageSize }),
      query.pageSize,
    );
  }

  /** The pods of a task (assumed endpoint). */
  listPods(taskId: string): Promise<TrainingPod[]> {
    return this.call("listPods", { params: { id: taskId } }, listOf(trainingPodSchema));
  }

  /** The outcome of a task create, in the canonical subscription-result shape. */
  getTrainingSubscriptionResult(key: string): Promise<SubscriptionResult> {
    return this.call(
      "getTrainingSubscriptionResult",
      { params: { key } },
      subscriptionResultSchema(key),
    );
  }

  /** Deletes a task; disabled unless configured. */
  deleteTrainingTask(id: string): Promise<void> {
    return this.call("deleteTrainingTask", { params: { id } }, emptyData);
  }

  /**
   * Ids of the tasks whose env carries `token` in `AIDC_CLIENT_TOKEN`, or undefined when
   * the task list is disabled. `name` narrows the list (fuzzy) before the env is checked;
   * a record listed without env is read in detail.
   */
  async findTrainingTaskIdsByClientToken(
    token: string,
    name?: string,
  ): Promise<string[] | undefined> {
    if (!this.isEndpointEnabled("listTrainingTasks")) return undefined;
    const ids: string[] = [];
    for await (const task of this.iterateTrainingTasks(name === undefined ? {} : { name })) {
      const env = task.env ?? (await this.getTrainingTask(task.id)).env;
      if (env?.[CLIENT_TOKEN_ENV] === token) ids.push(task.id);
    }
    return ids;
  }

  // --- templates ---------------------------------------------------------------------

  /** Creates a template (the answer carries no id: find it with `listTemplates` by name). */
  createTemplate(t: TrainingTemplateInput): Promise<void> {
    const body = validBody("createTemplate", templateBodySchema, toTemplateBody(t));
    return this.call("createTemplate", { body }, emptyData);
  }

  /** Replaces every field of template `id`. */
  updateTemplate(id: string, t: TrainingTemplateInput): Promise<void> {
    const body = validBody("updateTemplate", templateBodySchema, toTemplateBody(t));
    return this.call("updateTemplate", { params: { id }, body }, emptyData);
  }

  /** One page of the template list (assumed endpoint). */
  listTemplates(query: TemplateListQuery = {}): Promise<Page<TrainingTemplate>> {
    return this.call("listTemplates", { query: { ...query } }, pageOf(trainingTemplateSchema));
  }

  /** Every template matching `query`, page by page. */
  iterateTemplates(
    query: Omit<TemplateListQuery, "pageNo"> = {},
  ): AsyncGenerator<TrainingTemplate> {
    return paginate(
      (pageNo, pageSize) => this.listTemplates({ ...query, pageNo, pageSize }),
      query.pageSize,
    );
  }

  /** Deletes a template; disabled unless configured. */
  deleteTemplate(id: string): Promise<void> {
    return this.call("deleteTemplate", { params: { id } }, emptyData);
  }

  // --- products ----------------------------------------------------------------------

  /** Training resource specifications, of one compute center or all. */
  listTrainingProducts(aidcId?: number): Promise<TrainingProduct[]> {
    return this.call("listTrainingProducts", { query: { aidcId } }, listOf(trainingProductSchema));
  }

  /** NAS storage products, of one compute center or all the enterprise may use. */
  listNasProducts(aidcId?: number): Promise<NasProduct[]> {
    return this.call("listNasProducts", { query: { aidcId } }, listOf(nasProductSchema));
  }

  /** Whether a NAS product can be provisioned in a compute center (by id or code). */
  isNasProductAvailable(q: NasAvailabilityQuery): Promise<boolean> {
    const body = validBody("isNasProductAvailable", nasAvailabilityBodySchema, q);
    return this.call("isNasProductAvailable", { body }, nasAvailabilitySchema);
  }

  // --- NAS storage -------------------------------------------------------------------

  /** Subscribes a NAS (asynchronous; never retried blindly). Returns the subscription result key. */
  subscribeNas(req: SubscribeNasRequest): Promise<string> {
    const body = validBody("subscribeNas", subscribeNasBodySchema, toSubscribeNasBody(req));
    return this.call("subscribeNas", { body }, subscriptionKeySchema);
  }

  /** The outcome of a NAS subscription, in the canonical subscription-result shape. */
  getNasSubscriptionResult(key: string): Promise<SubscriptionResult> {
    return this.call(
      "getNasSubscriptionResult",
      { params: { key } },
      subscriptionResultSchema(key),
    );
  }

  /** Adds or removes `capacity` GB (the change, not the total; never retried blindly). */
  scaleNas(id: string, req: ScaleNasRequest): Promise<void> {
    const body = validBody("scaleNas", scaleNasBodySchema, {
      id,
      scaleType: req.scaleType,
      capacity: req.capacity,
    });
    return this.call("scaleNas", { params: { id }, body }, emptyData);
  }

  /** Changes the default mount path (tasks created afterwards see it). */
  updateNasMountPath(id: string, mountPath: string): Promise<void> {
    const body = validBody("updateNasMountPath", updateNasMountPathBodySchema, { mountPath });
    return this.call("updateNasMountPath", { params: { id }, body }, emptyData);
  }

  /** One page of the NAS list (assumed endpoint). */
  listNas(query: NasListQuery = {}): Promise<Page<NasInstance>> {
    return this.call("listNas", { query: { ...query } }, pageOf(nasInstanceSchema));
  }

  /** Every NAS matching `query`, page by page. */
  iterateNas(query: Omit<NasListQuery, "pageNo"> = {}): AsyncGenerator<NasInstance> {
    return paginate(
      (pageNo, pageSize) => this.listNas({ ...query, pageNo, pageSize }),
      query.pageSize,
    );
  }

  /** One NAS by id (assumed endpoint); `ServiceNotFoundError` when it does not exist. */
  getNas(id: string): Promise<NasInstance> {
    return this.call("getNas", { params: { id } }, nasInstanceSchema);
  }

  /** Deletes a NAS; disabled unless configured. */
  deleteNas(id: string): Promise<void> {
    return this.call("deleteNas", { params: { id } }, emptyData);
  }

  /**
   * Ids of the NAS instances whose description carries the marker of `token`, or
   * undefined when the NAS list is disabled. `name` narrows the list first.
   */
  async findNasIdsByClientToken(token: string, name?: string): Promise<string[] | undefined> {
    if (!this.isEndpointEnabled("listNas")) return undefined;
    const ids: string[] = [];
    for await (const nas of this.iterateNas(name === undefined ? {} : { name })) {
      if (clientTokenInDescription(nas.description) === token) ids.push(nas.id);
    }
    return ids;
  }

  // --- CCI ---------------------------------------------------------------------------

  /** One page of CCI instances. */
  listCci(query: CciListQuery = {}): Promise<Page<CciInstance>> {
    return this.call("listCci", { query: { ...query } }, pageOf(cciInstanceSchema));
  }

  /** Every CCI instance matching `query`, page by page (page size default 50). */
  iterateCci(query: Omit<CciListQuery, "pageNo"> = {}): AsyncGenerator<CciInstance> {
    const size = query.pageSize ?? DEFAULT_ITERATION_PAGE_SIZE;
    return paginate((pageNo, pageSize) => this.listCci({ ...query, pageNo, pageSize }), size);
  }

  /** One CCI instance in detail. */
  getCci(id: string): Promise<CciInstance> {
    return this.call("getCci", { params: { id } }, cciInstanceSchema);
  }

  /** Why a CCI instance failed. */
  getCciErrorDetails(id: string): Promise<CciErrorDetails> {
    return this.call("getCciErrorDetails", { params: { id } }, cciErrorDetailsSchema);
  }

  /** Saves a CCI instance as an image (never retried blindly); returns the image id. */
  saveCciImage(id: string, req: SaveCciImageRequest): Promise<SaveCciImageResult> {
    const body = validBody("saveCciImage", saveCciImageBodySchema, {
      imageName: req.imageName,
      tag: req.tag,
    });
    return this.call("saveCciImage", { params: { id }, body }, saveCciImageResultSchema);
  }

  // --- block and file storage (payloads not shown by the spec: passed through) -------

  /** Creates a block volume. */
  createVolume(body: JsonObject): Promise<StorageObject> {
    return this.call(
      "createVolume",
      { body: validBody("createVolume", jsonObjectBodySchema, body) },
      storageObjectSchema,
    );
  }

  /** Attaches volume `id` to an instance. */
  attachVolume(id: string, body: JsonObject): Promise<StorageObject> {
    const checked = validBody("attachVolume", jsonObjectBodySchema, body);
    return this.call("attachVolume", { params: { id }, body: checked }, storageObjectSchema);
  }

  /** Detaches volume `id`. */
  detachVolume(id: string, body: JsonObject = {}): Promise<StorageObject> {
    const checked = validBody("detachVolume", jsonObjectBodySchema, body);
    return this.call("detachVolume", { params: { id }, body: checked }, storageObjectSchema);
  }

  /** Deletes volume `id`. */
  deleteVolume(id: string): Promise<void> {
    return this.call("deleteVolume", { params: { id } }, emptyData);
  }

  /** Creates a file system. */
  createFileSystem(body: JsonObject): Promise<StorageObject> {
    const checked = validBody("createFileSystem", jsonObjectBodySchema, body);
    return this.call("createFileSystem", { body: checked }, storageObjectSchema);
  }

  /** Creates a mount of file system `id`. */
  createFileSystemMount(id: string, body: JsonObject): Promise<StorageObject> {
    const checked = validBody("createFileSystemMount", jsonObjectBodySchema, body);
    return this.call(
      "createFileSystemMount",
      { params: { id }, body: checked },
      storageObjectSchema,
    );
  }
}
