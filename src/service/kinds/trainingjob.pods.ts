/**
 * The pods of a TrainingJob's task and their ports (a part of trainingjob.ts): a pod's
 * resource, its open ports and closing a custom port as the spec documents them, and
 * the pod list and the open-port this project assumes (docs/service-assumptions.md),
 * with the bodies the port operations send (the records they answer: schemas/pods.ts).
 * `endpoints` joins the kind's endpoints; {@link TrainingPodOperations} is the part of
 * the kind's operations class a reader of the pods needs alone.
 */
import { z } from "zod";
import { assumed, documented, type EndpointDeclarations } from "../endpoint-definition.js";
import type { OperationsContext } from "../operation-caller.js";
import { emptyData, listOf } from "../schemas/data.js";
import { PORT_PROTOCOLS, type PortProtocol } from "../schemas/enums.js";
import {
  type OpenPort,
  openPodPortResultSchema,
  type PodOpenPorts,
  type PodResource,
  podOpenPortsSchema,
  podResourceSchema,
  type TrainingPod,
  trainingPodSchema,
} from "../schemas/pods.js";
import { lenientEnum } from "../schemas/primitives.js";

/** The pod operations of the endpoint table. */
export const endpoints = {
  getPodResource: documented("GET", "/v1/training/instance/{id}/{podName}/resource", true),
  listPodOpenPorts: documented("GET", "/v1/training/instance/{id}/{podName}/open-port/list", true),
  closePodPort: documented("POST", "/v1/training/instance/{id}/{podName}/close-port", false),
  // Referenced by the spec without a path.
  listPods: assumed("GET", "/v1/training/instance/{id}/pods", true),
  openPodPort: assumed("POST", "/v1/training/instance/{id}/{podName}/open-port", false),
} as const satisfies EndpointDeclarations;

/** Body of the assumed POST …/{podName}/open-port. */
export const openPodPortBodySchema = z.object({
  port: z.int().min(1).max(65535),
  protocol: lenientEnum(PORT_PROTOCOLS),
});

/** A custom port to open on a pod. */
export interface OpenPodPortRequest {
  port: number;
  protocol: PortProtocol;
}

/** Body of POST …/{podName}/close-port. */
export const closePodPortBodySchema = z.object({ port: z.int().min(1).max(65535) });

/** The pods of training tasks and their ports, called through the context's caller. */
export class TrainingPodOperations {
  constructor(private readonly ctx: OperationsContext) {}

  /** The pods of a task (assumed endpoint). */
  list(taskId: string): Promise<TrainingPod[]> {
    return this.ctx.caller.request(
      "listPods",
      { params: { id: taskId } },
      listOf(trainingPodSchema),
    );
  }

  /** Containers and volumes of one pod of a task. */
  resource(id: string, podName: string): Promise<PodResource> {
    return this.ctx.caller.request(
      "getPodResource",
      { params: { id, podName } },
      podResourceSchema,
    );
  }

  /** System and custom open ports of one pod. */
  openPorts(id: string, podName: string): Promise<PodOpenPorts> {
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
}
