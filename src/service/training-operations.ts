/**
 * Training task and template operations of the service client (see client-core.ts for
 * how the client is assembled).
 */

import { emptyData, listOf, ServiceClientCore, subscriptionKeySchema } from "./client-core.js";
import { CLIENT_TOKEN_ENV } from "./client-token.js";
import { ServiceMalformedResponseError, ServiceResultShapeError } from "./errors.js";
import { ListSnapshot, type ListSnapshotView, listedIds } from "./list-snapshot.js";
import { type ListedIds, type PageWalkEnd, paginate } from "./pagination.js";
import type { Page } from "./schemas/envelope.js";
import { pageOf } from "./schemas/envelope.js";
import { type NasInstance, nasInstanceSchema } from "./schemas/nas.js";
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

/** Training tasks, their pods and ports, and templates. */
export class TrainingOperations extends ServiceClientCore {
  /** The task list, walked at most once per asked age for every TrainingJob (`taskListSnapshot`). */
  private readonly taskSnapshot = new ListSnapshot<TrainingTask>(
    () => this.iterateTrainingTasks(),
    (task) => task.id,
    () => this.now(),
  );

  /** The template list, walked at most once per asked age for every TrainingTemplate (`templateListSnapshot`). */
  private readonly templateSnapshot = new ListSnapshot<TrainingTemplate>(
    () => this.iterateTemplates(),
    (template) => template.id,
    () => this.now(),
  );

  // --- training tasks ----------------------------------------------------------------

  /**
   * The result of subscription `key` through `name`, read with the configured mapping.
   * An envelope whose data cannot be read (an unknown state or shape) throws
   * `ServiceResultShapeError`, naming the config key that maps it.
   */
  protected async subscriptionResult(
    name: "getTrainingSubscriptionResult" | "getNasSubscriptionResult",
    key: string,
  ): Promise<SubscriptionResult> {
    try {
      return await this.call(
        name,
        { params: { key } },
        subscriptionResultSchema(key, this.subscriptionMapping),
      );
    } catch (err) {
      if (err instanceof ServiceMalformedResponseError && err.enveloped) {
        throw new ServiceResultShapeError(err.message, {
          endpoint: name,
          code: err.code,
          enveloped: true,
          cause: err,
        });
      }
      throw err;
    }
  }

  /** A task create body with the assumed fields under their configured wire names. */
  protected withCreateTaskFieldNames(body: Record<string, unknown>): Record<string, unknown> {
    const out = { ...body };
    for (const [field, wire] of Object.entries(this.createTaskFields)) {
      if (wire === field || out[field] === undefined) continue;
      out[wire] = out[field];
      delete out[field];
    }
    return out;
  }

  /** Creates a task (asynchronous; never retried blindly). Returns the subscription result key. */
  async createTrainingTask(req: CreateTrainingTaskRequest): Promise<string> {
    const body = this.validBody(
      "createTrainingTask",
      createTrainingTaskBodySchema,
      toCreateTrainingTaskBody(req),
    ) as Record<string, unknown>;
    return this.call(
      "createTrainingTask",
      { body: this.withCreateTaskFieldNames(body) },
      subscriptionKeySchema,
    );
  }

  /** Reads a task's configuration and run information. */
  async getTrainingTask(id: string): Promise<TrainingTask> {
    return this.call("getTrainingTask", { params: { id } }, trainingTaskSchema);
  }

  /** Replaces a task's description (nothing else changes). */
  async updateTrainingTaskDesc(id: string, desc: string): Promise<void> {
    const body = this.validBody("updateTrainingTaskDesc", updateTaskDescBodySchema, { desc });
    try {
      return await this.call("updateTrainingTaskDesc", { params: { id }, body }, emptyData);
    } finally {
      this.taskSnapshot.invalidate();
    }
  }

  /** Saves a task's configuration as a template named `name`. */
  async saveTrainingTaskAsTemplate(id: string, t: { name: string; desc?: string }): Promise<void> {
    const body = this.validBody("saveTrainingTaskAsTemplate", saveAsTemplateBodySchema, t);
    return this.call("saveTrainingTaskAsTemplate", { params: { id }, body }, emptyData);
  }

  /** The NAS storages a task mounts. */
  async listTrainingTaskStorages(id: string): Promise<NasInstance[]> {
    return this.call("listTrainingTaskStorages", { params: { id } }, listOf(nasInstanceSchema));
  }

  /** Containers and volumes of one pod of a task. */
  async getPodResource(id: string, podName: string): Promise<PodResource> {
    return this.call("getPodResource", { params: { id, podName } }, podResourceSchema);
  }

  /** System and custom open ports of one pod. */
  async listPodOpenPorts(id: string, podName: string): Promise<PodOpenPorts> {
    return this.call("listPodOpenPorts", { params: { id, podName } }, podOpenPortsSchema);
  }

  /** Opens a custom port (assumed endpoint); returns it when the answer says, else undefined. */
  async openPodPort(
    id: string,
    podName: string,
    req: OpenPodPortRequest,
  ): Promise<OpenPort | undefined> {
    const body = this.validBody("openPodPort", openPodPortBodySchema, {
      port: req.port,
      protocol: req.protocol,
    });
    return this.call("openPodPort", { params: { id, podName }, body }, openPodPortResultSchema);
  }

  /** Closes a previously opened port of a pod. */
  async closePodPort(id: string, podName: string, port: number): Promise<void> {
    const body = this.validBody("closePodPort", closePodPortBodySchema, { port });
    return this.call("closePodPort", { params: { id, podName }, body }, emptyData);
  }

  /** One page of the task list (assumed endpoint). */
  async listTrainingTasks(query: TrainingTaskListQuery = {}): Promise<Page<TrainingTask>> {
    return this.call("listTrainingTasks", { query: { ...query } }, pageOf(trainingTaskSchema));
  }

  /** Every task matching `query`, page by page (the walk returns whether it was complete). */
  iterateTrainingTasks(
    query: Omit<TrainingTaskListQuery, "pageNo"> = {},
  ): AsyncGenerator<TrainingTask, PageWalkEnd, undefined> {
    return paginate(
      (pageNo, pageSize) => this.listTrainingTasks({ ...query, pageNo, pageSize }),
      (task) => task.id,
      query.pageSize,
    );
  }

  /**
   * The ids of every task from a walk of the whole task list that started now or later
   * (shared with every caller that asks meanwhile, list-snapshot.ts), and whether the
   * walk was complete (see `PageWalkEnd`); undefined when the task list is disabled or
   * the walk failed.
   */
  async listTrainingTaskIds(): Promise<ListedIds | undefined> {
    if (!this.isEndpointEnabled("listTrainingTasks")) return undefined;
    const view = await this.taskSnapshot.readSince(this.now());
    return view && listedIds(view);
  }

  /**
   * The whole task list by id, walked anew when the last walk is `maxAgeMs` old or more
   * and shared by every caller (list-snapshot.ts); undefined when the task list is
   * disabled, known to be missing, or its walk failed.
   */
  async taskListSnapshot(maxAgeMs: number): Promise<ListSnapshotView<TrainingTask> | undefined> {
    if (
      !this.isEndpointEnabled("listTrainingTasks") ||
      this.operations.verdict("listTrainingTasks") === "missing"
    ) {
      return undefined;
    }
    return this.taskSnapshot.read(maxAgeMs);
  }

  /** The pods of a task (assumed endpoint). */
  async listPods(taskId: string): Promise<TrainingPod[]> {
    return this.call("listPods", { params: { id: taskId } }, listOf(trainingPodSchema));
  }

  /** The outcome of a task create, in the canonical subscription-result shape. */
  async getTrainingSubscriptionResult(key: string): Promise<SubscriptionResult> {
    return this.subscriptionResult("getTrainingSubscriptionResult", key);
  }

  /** Deletes a task; disabled unless configured. */
  async deleteTrainingTask(id: string): Promise<void> {
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
  async createTemplate(t: TrainingTemplateInput): Promise<void> {
    const body = this.validBody("createTemplate", templateBodySchema, toTemplateBody(t));
    try {
      return await this.call("createTemplate", { body }, emptyData);
    } finally {
      this.templateSnapshot.invalidate();
    }
  }

  /** Replaces every field of template `id`. */
  async updateTemplate(id: string, t: TrainingTemplateInput): Promise<void> {
    const body = this.validBody("updateTemplate", templateBodySchema, toTemplateBody(t));
    try {
      return await this.call("updateTemplate", { params: { id }, body }, emptyData);
    } finally {
      this.templateSnapshot.invalidate();
    }
  }

  /** One page of the template list (assumed endpoint). */
  async listTemplates(query: TemplateListQuery = {}): Promise<Page<TrainingTemplate>> {
    return this.call("listTemplates", { query: { ...query } }, pageOf(trainingTemplateSchema));
  }

  /** Every template matching `query`, page by page. */
  iterateTemplates(
    query: Omit<TemplateListQuery, "pageNo"> = {},
  ): AsyncGenerator<TrainingTemplate> {
    return paginate(
      (pageNo, pageSize) => this.listTemplates({ ...query, pageNo, pageSize }),
      (template) => template.id,
      query.pageSize,
    );
  }

  /**
   * The whole template list by id, walked anew when the last walk is `maxAgeMs` old or
   * more and shared by every caller (list-snapshot.ts); undefined when the template list
   * is disabled, known to be missing, or its walk failed.
   */
  async templateListSnapshot(
    maxAgeMs: number,
  ): Promise<ListSnapshotView<TrainingTemplate> | undefined> {
    if (
      !this.isEndpointEnabled("listTemplates") ||
      this.operations.verdict("listTemplates") === "missing"
    ) {
      return undefined;
    }
    return this.templateSnapshot.read(maxAgeMs);
  }

  /** Deletes a template; disabled unless configured. */
  async deleteTemplate(id: string): Promise<void> {
    try {
      return await this.call("deleteTemplate", { params: { id } }, emptyData);
    } finally {
      this.templateSnapshot.invalidate();
    }
  }
}
