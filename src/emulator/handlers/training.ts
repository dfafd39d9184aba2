/**
 * Training task operations of the emulator: the asynchronous create with the spec's
 * validation, detail, description, save-as-template, storages, pods and their ports,
 * the task list, the subscription result, and delete.
 */
import type { EndpointName } from "../../service/endpoints.js";
import { closePodPortBodySchema, openPodPortBodySchema } from "../../service/schemas/pods.js";
import {
  createTrainingTaskBodySchema,
  saveAsTemplateBodySchema,
  updateTaskDescBodySchema,
} from "../../service/schemas/training.js";
import {
  badRequest,
  conflict,
  fuzzyMatch,
  type Handler,
  type HandlerContext,
  notFound,
  pageOfRecords,
  parseBody,
  queryInt,
  queryText,
  recordOfPathId,
} from "../handler-context.js";
import { EXTERNAL_HOST } from "../pods.js";
import type { PodRecord, TaskRecord } from "../records.js";
import type { EmulatorState } from "../state.js";
import {
  nasView,
  podListItemView,
  podPortsView,
  podResourceView,
  portView,
  subscriptionResultView,
  taskView,
} from "../views.js";

function task(ctx: HandlerContext): TaskRecord {
  return recordOfPathId(ctx, ctx.state.tasks, "training task");
}

function pod(ctx: HandlerContext): { t: TaskRecord; p: PodRecord } {
  const t = task(ctx);
  const name = ctx.params.podName ?? "";
  const p = t.pods.find((x) => x.podName === name);
  if (!p) throw notFound(`pod of training task ${t.id}:`, name);
  return { t, p };
}

function createTask(ctx: HandlerContext): string {
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
    state.addSubscription({
      key,
      kind: "training",
      createdAt: now,
      resolveAt: now + state.behaviour.subscriptionDelayMs,
      outcome: "Failed",
      resolved: false,
      message: `insufficient resources for ${body.workerCount} x ${product.productCode}: ${reason}`,
    });
    return key;
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
    storageConfigs: (body.storageConfigs ?? []).map((c) => ({
      ...c,
      onlyRead: c.onlyRead ?? true,
    })),
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
  const sub = {
    key,
    kind: "training" as const,
    createdAt: now,
    resolveAt: now + state.behaviour.subscriptionDelayMs,
    outcome: "Succeeded" as const,
    resolved: false,
    instanceId: id,
  };
  state.addSubscription(sub);
  if (state.behaviour.subscriptionDelayMs <= 0) state.resolve(sub, now);
  return key;
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

function openPort(ctx: HandlerContext): Record<string, unknown> {
  const { t, p } = pod(ctx);
  const body = parseBody(openPodPortBodySchema, ctx.body);
  if (t.status !== "RUNNING") {
    throw badRequest(
      `training task ${t.id} is ${t.status}; ports can be opened only while it runs`,
    );
  }
  if ([...p.systemPorts, ...p.customPorts].some((x) => x.port === body.port)) {
    throw conflict(`port ${body.port} is already open on pod ${p.podName}`);
  }
  const port = {
    port: body.port,
    protocol: body.protocol,
    externalHost: EXTERNAL_HOST,
    externalPort: ctx.state.allocateExternalPort(),
  };
  p.customPorts.push(port);
  return portView(port);
}

function closePort(ctx: HandlerContext): Record<string, never> {
  const { p } = pod(ctx);
  const body = parseBody(closePodPortBodySchema, ctx.body);
  if (p.systemPorts.some((x) => x.port === body.port)) {
    throw badRequest(`port ${body.port} is a system port of pod ${p.podName} and cannot be closed`);
  }
  const i = p.customPorts.findIndex((x) => x.port === body.port);
  if (i < 0) throw badRequest(`port ${body.port} is not open on pod ${p.podName}`);
  p.customPorts.splice(i, 1);
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
  return { ...page, records: page.records.map((t) => taskView(t, state)) };
}

/** The result of subscription `key` of `kind` in the configured shape, or a 404 for an unknown key. */
export function subscriptionResult(
  state: EmulatorState,
  key: string,
  kind: "training" | "nas",
): unknown {
  const sub = state.subscriptions.get(key);
  if (!sub || sub.kind !== kind) throw notFound(`${kind} subscription result key`, key);
  return subscriptionResultView(sub, state.behaviour.subscriptionResultShape);
}

/** The training task operations, by endpoint name. */
export const trainingHandlers = {
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
      return nas ? [nasView(nas)] : [];
    });
  },
  getPodResource: (ctx) => {
    const { t, p } = pod(ctx);
    return podResourceView(t, p, ctx.state);
  },
  listPodOpenPorts: (ctx) => podPortsView(pod(ctx).p),
  openPodPort: openPort,
  closePodPort: closePort,
  listTrainingTasks: listTasks,
  listPods: (ctx) => {
    const t = task(ctx);
    return t.pods.map((p) => podListItemView(t, p));
  },
  getTrainingSubscriptionResult: (ctx) =>
    subscriptionResult(ctx.state, ctx.params.key ?? "", "training"),
  deleteTrainingTask: (ctx) => {
    ctx.state.tasks.delete(task(ctx).id);
    return {};
  },
} satisfies Partial<Record<EndpointName, Handler>>;
