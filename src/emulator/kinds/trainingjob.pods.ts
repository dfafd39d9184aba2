/**
 * The pods of a TrainingJob's task in the emulator, and their ports (a part of
 * trainingjob.ts): pod list, resources, open ports, and opening and closing a custom
 * port while the task runs, and their wire views.
 */
import type { EndpointName } from "../../service/endpoints.js";
import {
  closePodPortBodySchema,
  openPodPortBodySchema,
} from "../../service/kinds/trainingjob.pods.js";
import {
  badRequest,
  conflict,
  type Handler,
  type HandlerContext,
  notFound,
  parseBody,
  recordOfPathId,
} from "../handler-context.js";
import { containerStatusFor, EXTERNAL_HOST } from "../pods.js";
import type { PodRecord, PortRecord, TaskRecord } from "../records.js";
import type { EmulatorState } from "../state.js";
import { naive } from "../views.js";

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

/** A pod of the assumed pod list. */
export function podListItemView(t: TaskRecord, p: PodRecord): Record<string, unknown> {
  return {
    podName: p.podName,
    status: t.status === "RUNNING" ? "Running" : t.status === "PENDING" ? "Pending" : "Terminated",
    role: p.role,
    ip: p.ip,
    nodeName: p.nodeName,
    createTime: naive(p.createdAt),
  };
}

/** The resource detail of a pod: containers and volumes. */
export function podResourceView(
  t: TaskRecord,
  p: PodRecord,
  state: EmulatorState,
): Record<string, unknown> {
  return {
    containers: p.containers.map((c) => ({
      containerName: c.containerName,
      status: t.status === "RUNNING" ? c.status : containerStatusFor(t.status),
      reason: c.reason,
      restartCount: c.restartCount,
      targetPort: [...p.systemPorts, ...p.customPorts].map((port) => port.port),
      podWebSSH: c.podWebSSH,
    })),
    volumes: t.storageConfigs.map((c) => {
      const nas = state.nas.get(c.storageId);
      return {
        nasName: nas?.name ?? c.storageId,
        nasType: c.storageType ?? nas?.storageType ?? "",
        mountPath: c.mountPath ?? nas?.mountPath ?? "",
        readOnly: c.onlyRead ?? true,
        path: c.fileDirectory ?? "/",
      };
    }),
  };
}

/** One open port on the wire; system ports carry no protocol. */
export function portView(p: PortRecord): Record<string, unknown> {
  return {
    ...(p.protocol === undefined ? {} : { protocol: p.protocol }),
    port: p.port,
    externalHost: p.externalHost,
    externalPort: p.externalPort,
  };
}

/** The open ports of a pod. */
export function podPortsView(p: PodRecord): Record<string, unknown> {
  return { ports: p.systemPorts.map(portView), customPorts: p.customPorts.map(portView) };
}

/** The pod operations, by endpoint name. */
export const handlers = {
  listPods: (ctx) => {
    const t = task(ctx);
    return t.pods.map((p) => podListItemView(t, p));
  },
  getPodResource: (ctx) => {
    const { t, p } = pod(ctx);
    return podResourceView(t, p, ctx.state);
  },
  listPodOpenPorts: (ctx) => podPortsView(pod(ctx).p),
  openPodPort: openPort,
  closePodPort: closePort,
} satisfies Partial<Record<EndpointName, Handler>>;
