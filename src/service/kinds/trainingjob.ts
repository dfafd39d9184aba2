/**
 * The TrainingJob kind's service operations: the training product catalog, the task
 * create (asynchronous) and its result, the task's detail, description, storages and
 * save-as-template as the spec documents them, its pods and their ports, and the list,
 * pod list and delete this project assumes (docs/service-assumptions.md). `endpoints`
 * joins the endpoint table (generated kinds/index.ts); the account's calls
 * (`AccountCalls`) hold one {@link TrainingTaskOperations}.
 */
import { assumed, documented, type EndpointDeclarations } from "../endpoint-definition.js";
import { KindList } from "../kind-list.js";
import type { ListSnapshotView } from "../list-snapshot.js";
import type { OperationsContext } from "../operation-caller.js";
import type { ListedIds, PageWalkEnd } from "../pagination.js";
import {
  CLIENT_TOKEN_ENV,
  type SubscriptionResult,
  subscriptionKeySchema,
} from "../schemas/create.js";
import { emptyData, listOf, type Page } from "../schemas/data.js";
import { type NasInstance, nasInstanceSchema } from "../schemas/nas.js";
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
} from "../schemas/pods.js";
import {
  type CreateTrainingTaskRequest,
  createTrainingTaskBodySchema,
  saveAsTemplateBodySchema,
  type TrainingProduct,
  type TrainingTask,
  type TrainingTaskListQuery,
  toCreateTrainingTaskBody,
  trainingProductSchema,
  trainingTaskSchema,
  updateTaskDescBodySchema,
} from "../schemas/training.js";

/** The training task operations of the endpoint table; the delete is off until a path is configured. */
export const endpoints = {
  listTrainingProducts: documented("GET", "/v1/product/list-for-training-task", true),
  createTrainingTask: documented("POST", "/v1/subscription/training/create", false),
  getTrainingTask: documented("GET", "/v1/training/instance/{id}/detail", true),
  updateTrainingTaskDesc: documented("PUT", "/v1/training/instance/{id}/desc", true),
  saveTrainingTaskAsTemplate: documented(
    "POST",
    "/v1/training/instance/{id}/saveAsTemplate",
    false,
  ),
  listTrainingTaskStorages: documented("GET", "/v1/training/instance/{id}/storages", true),
  getPodResource: documented("GET", "/v1/training/instance/{id}/{podName}/resource", true),
  listPodOpenPorts: documented("GET", "/v1/training/instance/{id}/{podName}/open-port/list", true),
  closePodPort: documented("POST", "/v1/training/instance/{id}/{podName}/close-port", false),
  // Referenced by the spec without a path.
  getTrainingSubscriptionResult: assumed("GET", "/v1/subscription/training/result/{key}", true),
  listTrainingTasks: assumed("GET", "/v1/training/instance/list", true),
  listPods: assumed("GET", "/v1/training/instance/{id}/pods", true),
  openPodPort: assumed("POST", "/v1/training/instance/{id}/{podName}/open-port", false),
  // Not named by the spec.
  deleteTrainingTask: assumed("DELETE", "/v1/training/instance/{id}", true, false),
} as const satisfies EndpointDeclarations;

/**
 * Request fields the spec's field lists do not have, by the name the client uses, with
 * the wire name sent by default. The task create's field list names no source for
 * createType COPY or TEMPLATE, so the client sends these assumed fields, only when set;
 * the operator config (`service.createTaskFields`) renames them for a service that
 * spells them otherwise.
 */
export const DEFAULT_CREATE_TASK_FIELDS = {
  /** The task a COPY create copies. */
  sourceTaskId: "sourceTaskId",
  /** The template a TEMPLATE create starts from. */
  templateId: "templateId",
} as const;

/** Wire names of the assumed create fields (see {@link DEFAULT_CREATE_TASK_FIELDS}). */
export type CreateTaskFieldNames = Record<keyof typeof DEFAULT_CREATE_TASK_FIELDS, string>;

/** Training products, tasks, their pods and ports, called through the context's caller. */
export class TrainingTaskOperations {
  private listView: KindList<TrainingTask, TrainingTaskListQuery> | undefined;

  /** `createTaskFields`: wire names of the task create's assumed fields. */
  constructor(
    private readonly ctx: OperationsContext,
    private readonly createTaskFields: CreateTaskFieldNames = DEFAULT_CREATE_TASK_FIELDS,
  ) {}

  /** The task list, walked at most once per asked age for every TrainingJob; made at first use. */
  private get list(): KindList<TrainingTask, TrainingTaskListQuery> {
    this.listView ??= new KindList(this.ctx.caller, {
      operation: "listTrainingTasks",
      record: trainingTaskSchema,
      id: (task) => task.id,
      now: this.ctx.now,
      knownMissing: this.ctx.knownMissing,
      states: this.ctx.lists,
    });
    return this.listView;
  }

  /** Training resource specifications, of one compute center or all (cached). */
  products(aidcId?: number): Promise<TrainingProduct[]> {
    return this.ctx.catalog.read(`training:${aidcId ?? ""}`, () =>
      this.ctx.caller.request(
        "listTrainingProducts",
        { query: { aidcId } },
        listOf(trainingProductSchema),
      ),
    );
  }

  /** Creates a task (asynchronous; never retried blindly). Returns the subscription result key. */
  async create(req: CreateTrainingTaskRequest): Promise<string> {
    const body = this.ctx.caller.checkedBody(
      "createTrainingTask",
      createTrainingTaskBodySchema,
      toCreateTrainingTaskBody(req),
    ) as Record<string, unknown>;
    // The assumed fields go under their configured wire names.
    const wire = { ...body };
    for (const [field, name] of Object.entries(this.createTaskFields)) {
      if (name === field || wire[field] === undefined) continue;
      wire[name] = wire[field];
      delete wire[field];
    }
    return this.ctx.caller.request("createTrainingTask", { body: wire }, subscriptionKeySchema);
  }

  /** The outcome of a task create, in the canonical subscription-result shape. */
  subscriptionResult(key: string): Promise<SubscriptionResult> {
    return this.ctx.subscriptionResult("getTrainingSubscriptionResult", key);
  }

  /** Reads a task's configuration and run information. */
  get(id: string): Promise<TrainingTask> {
    return this.ctx.caller.request("getTrainingTask", { params: { id } }, trainingTaskSchema);
  }

  /** Replaces a task's description (nothing else changes). */
  async updateDesc(id: string, desc: string): Promise<void> {
    const body = this.ctx.caller.checkedBody("updateTrainingTaskDesc", updateTaskDescBodySchema, {
      desc,
    });
    return this.list.changing(() =>
      this.ctx.caller.request("updateTrainingTaskDesc", { params: { id }, body }, emptyData),
    );
  }

  /** Saves a task's configuration as a template named `t.name`. */
  async saveAsTemplate(id: string, t: { name: string; desc?: string }): Promise<void> {
    const body = this.ctx.caller.checkedBody(
      "saveTrainingTaskAsTemplate",
      saveAsTemplateBodySchema,
      t,
    );
    return this.ctx.caller.request(
      "saveTrainingTaskAsTemplate",
      { params: { id }, body },
      emptyData,
    );
  }

  /** The NAS storages a task mounts. */
  storages(id: string): Promise<NasInstance[]> {
    return this.ctx.caller.request(
      "listTrainingTaskStorages",
      { params: { id } },
      listOf(nasInstanceSchema),
    );
  }

  /** The pods of a task (assumed endpoint). */
  pods(taskId: string): Promise<TrainingPod[]> {
    return this.ctx.caller.request(
      "listPods",
      { params: { id: taskId } },
      listOf(trainingPodSchema),
    );
  }

  /** Containers and volumes of one pod of a task. */
  podResource(id: string, podName: string): Promise<PodResource> {
    return this.ctx.caller.request(
      "getPodResource",
      { params: { id, podName } },
      podResourceSchema,
    );
  }

  /** System and custom open ports of one pod. */
  podOpenPorts(id: string, podName: string): Promise<PodOpenPorts> {
    return this.ctx.caller.request(
      "listPodOpenPorts",
      { params: { id, podName } },
      podOpenPortsSchema,
    );
  }

  /** Opens a custom port (assumed endpoint); returns it when the answer says, else undefined. */
  async openPort(
    id: string,
    podName: string,
    req: OpenPodPortRequest,
  ): Promise<OpenPort | undefined> {
    const body = this.ctx.caller.checkedBody("openPodPort", openPodPortBodySchema, {
      port: req.port,
      protocol: req.protocol,
    });
    return this.ctx.caller.request(
      "openPodPort",
      { params: { id, podName }, body },
      openPodPortResultSchema,
    );
  }

  /** Closes a previously opened port of a pod. */
  async closePort(id: string, podName: string, port: number): Promise<void> {
    const body = this.ctx.caller.checkedBody("closePodPort", closePodPortBodySchema, { port });
    return this.ctx.caller.request("closePodPort", { params: { id, podName }, body }, emptyData);
  }

  /** One page of the task list (assumed endpoint). */
  page(query: TrainingTaskListQuery = {}): Promise<Page<TrainingTask>> {
    return this.list.page(query);
  }

  /** Every task matching `query`, page by page (the walk returns whether it was complete). */
  iterate(
    query: Omit<TrainingTaskListQuery, "pageNo"> = {},
  ): AsyncGenerator<TrainingTask, PageWalkEnd, undefined> {
    return this.list.iterate(query);
  }

  /** The ids of every task from a shared walk of the whole list (see `KindList.ids`). */
  listIds(): Promise<ListedIds | undefined> {
    return this.list.ids();
  }

  /** The whole task list by id, at most `maxAgeMs` old (see `KindList.read`). */
  listSnapshot(maxAgeMs: number): Promise<ListSnapshotView<TrainingTask> | undefined> {
    return this.list.read(maxAgeMs);
  }

  /** Deletes a task; disabled unless configured. */
  delete(id: string): Promise<void> {
    return this.ctx.caller.request("deleteTrainingTask", { params: { id } }, emptyData);
  }

  /**
   * Ids of the tasks whose env carries `token` in `AIDC_CLIENT_TOKEN`, or undefined when
   * the task list is disabled. `name` narrows the list (fuzzy) before the env is checked;
   * a record listed without env is read in detail.
   */
  async findIdsByClientToken(token: string, name?: string): Promise<string[] | undefined> {
    if (!this.list.enabled) return undefined;
    const ids: string[] = [];
    for await (const task of this.iterate(name === undefined ? {} : { name })) {
      const env = task.env ?? (await this.get(task.id)).env;
      if (env?.[CLIENT_TOKEN_ENV] === token) ids.push(task.id);
    }
    return ids;
  }
}
