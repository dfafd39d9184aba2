/**
 * The TrainingJob kind's service operations: the training product catalog, the task
 * create (asynchronous) and its result, the task's detail, description, storages and
 * save-as-template as the spec documents them, and the list and delete this project
 * assumes (docs/service-assumptions.md), with the bodies they send and the list query
 * (the records they answer: schemas/training.ts). Three parts are modules of their own:
 * the create request (trainingjob.create.ts), the pods with their ports
 * (trainingjob.pods.ts) and the env of a task listed without it (trainingjob.env.ts).
 * `endpoints` joins the endpoint table (generated kinds/index.ts); the account's calls
 * (`AccountCalls`) hold one {@link TrainingTaskOperations}.
 */
import { z } from "zod";
import { assumed, documented, type EndpointDeclarations } from "../endpoint-definition.js";
import { KindList } from "../kind-list.js";
import { completedView, type ListSnapshotView } from "../list-snapshot.js";
import type { OperationsContext } from "../operation-caller.js";
import { type ListedIds, type PageWalkEnd, walkProvesAbsent } from "../pagination.js";
import { CLIENT_TOKEN_ENV, type SubscriptionResult } from "../schemas/create.js";
import { emptyData, listOf, type Page } from "../schemas/data.js";
import { type NasInstance, nasInstanceSchema } from "../schemas/nas.js";
import {
  type TrainingProduct,
  type TrainingTask,
  trainingProductSchema,
  trainingTaskSchema,
} from "../schemas/training.js";
import {
  type CreateTrainingTaskRequest,
  createTrainingTaskBodySchema,
  toCreateTrainingTaskBody,
} from "./trainingjob.create.js";
import { withDetailEnv, withKnownEnv } from "./trainingjob.env.js";
import { endpoints as podEndpoints } from "./trainingjob.pods.js";
import { templateList } from "./trainingtemplate.js";

/**
 * The training task operations of the endpoint table, its pods' included; the delete is
 * off until a path is configured.
 */
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
  // Referenced by the spec without a path.
  getTrainingSubscriptionResult: assumed("GET", "/v1/subscription/training/result/{key}", true),
  listTrainingTasks: assumed("GET", "/v1/training/instance/list", true),
  // Not named by the spec.
  deleteTrainingTask: assumed("DELETE", "/v1/training/instance/{id}", true, false),
  ...podEndpoints,
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

/** Body of PUT /v1/training/instance/{id}/desc. */
export const updateTaskDescBodySchema = z.object({ desc: z.string() });

/** Body of POST /v1/training/instance/{id}/saveAsTemplate. */
export const saveAsTemplateBodySchema = z.object({
  name: z.string().min(1),
  desc: z.string().optional(),
});

/** Query of the task list (an operation the spec refers to without a shape). */
export interface TrainingTaskListQuery {
  pageNo?: number;
  pageSize?: number;
  /** Fuzzy match on the task name. */
  name?: string;
  status?: string;
  aidcId?: number;
}

/**
 * Training products and tasks, called through the context's caller (their pods and
 * ports: trainingjob.pods.ts).
 */
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
    return this.ctx.caller.request("createTrainingTask", { body: wire }, this.ctx.subscriptionKey);
  }

  /** The outcome of a task create, in the canonical subscription-result shape. */
  subscriptionResult(key: string): Promise<SubscriptionResult> {
    return this.ctx.subscriptionResult("getTrainingSubscriptionResult", key);
  }

  /** Reads a task's configuration and run information; its env is kept for the task list. */
  async get(id: string): Promise<TrainingTask> {
    const task = await this.ctx.caller.request(
      "getTrainingTask",
      { params: { id } },
      trainingTaskSchema,
    );
    this.list.keepDetail(id, { env: task.env });
    return task;
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

  /**
   * Saves a task's configuration as a template named `t.name`: a change of the template
   * list, whose snapshot it drops as a template create does.
   */
  async saveAsTemplate(id: string, t: { name: string; desc?: string }): Promise<void> {
    const body = this.ctx.caller.checkedBody(
      "saveTrainingTaskAsTemplate",
      saveAsTemplateBodySchema,
      t,
    );
    return templateList(this.ctx).changing(() =>
      this.ctx.caller.request("saveTrainingTaskAsTemplate", { params: { id }, body }, emptyData),
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

  /**
   * The whole task list by id, at most `maxAgeMs` old (see `KindList.read`), a task
   * listed without env with the env its last detail read showed (`withKnownEnv`).
   */
  async listSnapshot(maxAgeMs: number): Promise<ListSnapshotView<TrainingTask> | undefined> {
    const view = await this.list.read(maxAgeMs);
    return view && completedView(view, (task) => withKnownEnv(this.list.details, task));
  }

  /** Deletes a task (its kept env goes with it); disabled unless configured. */
  async delete(id: string): Promise<void> {
    try {
      await this.ctx.caller.request("deleteTrainingTask", { params: { id } }, emptyData);
    } finally {
      this.list.details.forget(id);
    }
  }

  /**
   * Ids of the tasks whose env carries `token` in `AIDC_CLIENT_TOKEN`, or undefined when
   * the task list is disabled. `name` narrows the list (fuzzy) before the env is checked.
   */
  async findIdsByClientToken(token: string, name?: string): Promise<string[] | undefined> {
    if (!this.list.enabled) return undefined;
    const ids: string[] = [];
    for await (const task of this.withEnv(name === undefined ? {} : { name })) {
      if (task.env?.[CLIENT_TOKEN_ENV] === token) ids.push(task.id);
    }
    return ids;
  }

  /**
   * Whether one walk of the whole task list, started now, proves that no task carries
   * `token` (`walkProvesAbsent`: every task's env read); undefined when the list is disabled.
   */
  async provesTokenAbsent(token: string): Promise<boolean | undefined> {
    if (!this.list.enabled) return undefined;
    return walkProvesAbsent(
      this.withEnv(),
      (task) => task.env !== undefined,
      (task) => task.env?.[CLIENT_TOKEN_ENV] === token,
    );
  }

  /** The tasks matching `query`, each with its env (`withDetailEnv`). */
  private withEnv(
    query: Omit<TrainingTaskListQuery, "pageNo"> = {},
  ): AsyncGenerator<TrainingTask, PageWalkEnd, undefined> {
    return withDetailEnv(this.iterate(query), this.list.details, (id) => this.get(id));
  }
}
