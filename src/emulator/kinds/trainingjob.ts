/**
 * The TrainingJob kind's operations in the emulator (gathered by the generated
 * kinds/index.ts): the training products, the asynchronous task create with the
 * spec's validation, detail, description, save-as-template, storages, the task list,
 * the subscription result and delete; its pods and their ports are in
 * trainingjob.pods.ts. `taskView` is a task on the wire.
 */
import type { KIND_ENDPOINT_TABLES } from "../../service/kinds/index.js";
import { createTrainingTaskBodySchema } from "../../service/kinds/trainingjob.create.js";
import {
  saveAsTemplateBodySchema,
  updateTaskDescBodySchema,
} from "../../service/kinds/trainingjob.js";
import {
  badRequest,
  fuzzyMatch,
  type Handler,
  type HandlerContext,
  listedRecord,
  pageOfRecords,
  parseBody,
  queryInt,
  queryText,
  recordOfPathId,
  repeatedDelete,
} from "../handler-context.js";
import type { TaskRecord } from "../records.js";
import type { EmulatorState } from "../state.js";
import { acceptCreate, subscriptionResult } from "../subscription-results.js";
import { naive } from "../views.js";
import { nasView } from "./nasvolume.js";
import { handlers as podHandlers } from "./trainingjob.pods.js";

function task(ctx: HandlerContext): TaskRecord {
  return recordOfPathId(ctx, ctx.state.tasks, "training task");
}

function createTask(ctx: HandlerContext): unknown {
  const { state } = ctx;
  const body = parseBody(createTrainingTaskBodySchema, ctx.body);
  if (
    body.trainingFramwork &&
    body.trainingFramework &&
    body.trainingFramwork !== body.trainingFramework
  ) {
    throw badRequest("trainingFramwork and trainingFramework disagree; send one of them");
  }
  const product = state.trainingProducts.find((p) => p.productCode === body.productCode);
  if (!product) {
    throw badRequest(
      `unknown productCode ${body.productCode} (see /v1/product/list-for-training-task)`,
    );
  }
  if (body.createType === "TEMPLATE" && body.templateId && !state.templates.has(body.templateId)) {
    throw badRequest(`template ${body.templateId} not found`);
  }
  if (body.createType === "COPY" && body.sourceTaskId && !state.tasks.has(body.sourceTaskId)) {
    throw badRequest(`training task ${body.sourceTaskId} to copy not found`);
  }
  for (const c of body.storageConfigs ?? []) {
    if (!state.nas.has(c.storageId)) throw badRequest(`storage ${c.storageId} not found`);
  }
  const now = state.now();
  const key = state.nextSubscriptionKey("training");
  const remaining = product.remainingCount ?? Number.POSITIVE_INFINITY;
  if (remaining < body.workerCount) {
    const reason = product.ext?.stockError ?? `${remaining} units left`;
    return acceptCreate(state, "training", key, now, {
      failed: `insufficient resources for ${body.workerCount} x ${product.productCode}: ${reason}`,
    });
  }
  const id = state.nextId("task");
  const record: TaskRecord = {
    id,
    name: body.name,
    desc: body.desc ?? "",
    createType: body.createType,
    priority: body.priority ?? 3,
    image: body.image,
    productCode: body.productCode,
    workerCount: body.workerCount,
    aidcId: product.aidcId ?? 1,
    // The storage's mount path as it is now: a later change of its default path affects
    // only tasks created afterwards, never this one (the spec's rule).
    storageConfigs: (body.storageConfigs ?? []).map((c) => {
      const mountPath = c.mountPath ?? state.nas.get(c.storageId)?.mountPath;
      return { ...c, ...(mountPath ? { mountPath } : {}), onlyRead: c.onlyRead ?? true };
    }),
    env: body.env ?? {},
    enableAutoRetry: body.enableAutoRetry ?? false,
    maxRetryCount: body.maxRetryCount ?? 0,
    enableTimeoutCancel: body.enableTimeoutCancel ?? false,
    timeoutHours: body.timeoutHours ?? 0,
    startCommand: body.startCommand ?? "",
    status: "PENDING",
    createdAt: now,
    updatedAt: now,
    visibleAt: now + state.behaviour.listVisibilityDelayMs,
    ...state.unknownUntilResolved(),
    execInfos: [{ status: "PENDING", info: "task accepted", at: now }],
    pods: [],
  };
  const framework = body.trainingFramework ?? body.trainingFramwork;
  if (body.trainingType) record.trainingType = body.trainingType;
  if (framework) record.trainingFramework = framework;
  if (body.imageType) record.imageType = body.imageType;
  if (body.templateId) record.templateId = body.templateId;
  if (body.sourceTaskId) record.sourceTaskId = body.sourceTaskId;
  state.tasks.set(id, record);
  return acceptCreate(state, "training", key, now, { instanceId: id });
}

function saveAsTemplate(ctx: HandlerContext): Record<string, never> {
  const t = task(ctx);
  const body = parseBody(saveAsTemplateBodySchema, ctx.body);
  const view = taskView(t, ctx.state);
  const id = ctx.state.nextId("tpl");
  const now = ctx.state.now();
  ctx.state.templates.set(id, {
    id,
    fields: {
      name: body.name,
      desc: body.desc ?? "",
      aidcId: t.aidcId,
      trainingType: t.trainingType,
      trainingFramwork: t.trainingFramework,
      imageType: t.imageType,
      image: t.image,
      env: { ...t.env },
      resource: view.resource,
      enableAutoRetry: t.enableAutoRetry,
      storageConfigs: t.storageConfigs.map((c) => ({ ...c })),
      maxRetryCount: t.maxRetryCount,
      enableTimeoutCancel: t.enableTimeoutCancel,
      timeoutHours: t.timeoutHours,
      startCommand: t.startCommand,
      priority: t.priority,
    },
    createdAt: now,
    updatedAt: now,
  });
  return {};
}

function listTasks(ctx: HandlerContext): unknown {
  const { state, query } = ctx;
  const name = queryText(query, "name");
  const status = queryText(query, "status")?.toUpperCase();
  const aidcId = queryInt(query, "aidcId");
  const matching: TaskRecord[] = [];
  for (const t of state.tasks.values()) {
    if (!state.isListed(t) || !fuzzyMatch(t.name, name)) continue;
    if (status !== undefined && t.status !== status) continue;
    if (aidcId !== undefined && t.aidcId !== aidcId) continue;
    matching.push(t);
  }
  const page = pageOfRecords(matching, ctx);
  return { ...page, records: page.records.map((t) => listedRecord(taskView(t, state), state)) };
}

/** A training task as the detail (and, `listedRecord`, the task list) returns it. */
export function taskView(t: TaskRecord, state: EmulatorState): Record<string, unknown> {
  const product = state.trainingProducts.find((p) => p.productCode === t.productCode);
  return {
    id: t.id,
    name: t.name,
    desc: t.desc,
    createType: t.createType,
    trainingType: t.trainingType,
    trainingFramwork: t.trainingFramework,
    imageType: t.imageType,
    priority: t.priority,
    image: t.image,
    aidcId: t.aidcId,
    storageConfigs: t.storageConfigs.map((c) => {
      const nas = state.nas.get(c.storageId);
      return {
        ...(nas ? nasView(nas, state) : { id: c.storageId }),
        storageId: c.storageId,
        fileDirectory: c.fileDirectory ?? "",
        mountPath: c.mountPath ?? nas?.mountPath ?? "",
        onlyRead: c.onlyRead ?? true,
      };
    }),
    env: { ...t.env, empty: Object.keys(t.env).length === 0 },
    enableAutoRetry: t.enableAutoRetry,
    maxRetryCount: t.maxRetryCount,
    enableTimeoutCancel: t.enableTimeoutCancel,
    timeoutHours: t.timeoutHours,
    startCommand: t.startCommand,
    resource: {
      type: "worker",
      gpuName: product?.gpuName ?? "-",
      cpuCores: product?.cpuCores ?? "",
      gpuCount: product?.gpuCount ?? "0",
      memoryGB: product?.memoryGB ?? "",
      productName: product?.name ?? "",
      productCode: t.productCode,
      workerCount: t.workerCount,
      productPrice: product?.price ?? "",
      empty: false,
    },
    createdBy: "user-0001",
    creatorName: "Emulated User",
    createdTime: naive(t.createdAt),
    startTime: naive(t.startedAt),
    lastUpdateTime: naive(t.updatedAt),
    status: t.status,
    source: t.createType,
    ...(t.templateId ? { templateId: t.templateId } : {}),
    ...(t.sourceTaskId ? { sourceTaskId: t.sourceTaskId } : {}),
    execInfos: t.execInfos.map((e) => ({
      trainingTaskId: t.id,
      status: e.status,
      info: e.info,
      createTime: naive(e.at),
    })),
  };
}

/** The training task operations, by endpoint name. */
export const handlers = {
  createTrainingTask: createTask,
  getTrainingTask: (ctx) => taskView(task(ctx), ctx.state),
  updateTrainingTaskDesc: (ctx) => {
    const t = task(ctx);
    t.desc = parseBody(updateTaskDescBodySchema, ctx.body).desc;
    t.updatedAt = ctx.state.now();
    return {};
  },
  saveTrainingTaskAsTemplate: saveAsTemplate,
  listTrainingTaskStorages: (ctx) => {
    const ids = new Set(task(ctx).storageConfigs.map((c) => c.storageId));
    return [...ids].flatMap((id) => {
      const nas = ctx.state.nas.get(id);
      return nas ? [nasView(nas, ctx.state)] : [];
    });
  },
  listTrainingTasks: listTasks,
  getTrainingSubscriptionResult: (ctx) =>
    subscriptionResult(ctx.state, ctx.params.key ?? "", "training"),
  deleteTrainingTask: (ctx) => {
    const t = task(ctx);
    const { state } = ctx;
    if (state.releases.has(t.id)) repeatedDelete(state, "training task", t.id);
    else if (
      state.releases.start(state.tasks, t.id, state.now(), state.behaviour.taskReleaseDelayMs)
    ) {
      t.status = "DELETING";
      t.updatedAt = state.now();
    }
    return {};
  },
  listTrainingProducts: (ctx) => {
    const aidcId = queryInt(ctx.query, "aidcId");
    return ctx.state.trainingProducts.filter((p) => aidcId === undefined || p.aidcId === aidcId);
  },
  ...podHandlers,
} satisfies Record<keyof (typeof KIND_ENDPOINT_TABLES)["trainingjob"], Handler>;
