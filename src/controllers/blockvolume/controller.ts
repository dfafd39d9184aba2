/**
 * The BlockVolume controller: the generic managed reconciler (../managed, declared with
 * `managedController`) with the volume ExternalClient (external.ts), the reference step
 * that resolves `spec.attachTo.cciInstanceRef` to the CciInstance's bound instance, and
 * the status mapping below.
 */
import {
  BLOCK_VOLUME_REASONS,
  type BlockVolume as BlockVolumeObject,
  type BlockVolumeStatus,
  blockVolumeCrd,
} from "../../crds/blockvolume.js";
import { type CciInstance, cciInstanceCrd } from "../../crds/cciinstance.js";
import type { CacheReader } from "../../runtime/cache.js";
import type { ControllerDefinition } from "../../runtime/controller.js";
import { capFreeText, capValue } from "../../runtime/object-writes.js";
import type { KubeObject, ObjectKey } from "../../runtime/resource.js";
import { type BlockVolume as RemoteVolume, stripClientTokenMarker } from "../../service/index.js";
import { volumeListSnapshot } from "../../service/kinds/blockvolume.js";
import type { ControllerDeps } from "../controller-factory.js";
import { perAccount } from "../managed/account-memory.js";
import type { ManagedFacts, ReferenceReader, ReferenceResolution } from "../managed/call.js";
import { exportData } from "../managed/export.js";
import type { ManagedKind } from "../managed/external-client.js";
import { contradictions } from "../managed/fixed-fields.js";
import { managedController, managedLoopOptions } from "../managed/managed-controller.js";
import { stalledNote } from "../referenced-state.js";
import { volumePhase } from "./decisions.js";
import { BlockVolumeExternalClient, type VolumeRefs } from "./external.js";

/** The finalizer of BlockVolumes. */
export const BLOCK_VOLUME_FINALIZER = "aidc.io/blockvolume";

/**
 * The instance `spec.attachTo` names: its `instanceId`, or the instance the CciInstance
 * of `cciInstanceRef` is bound to (its status.instanceId, written once the binding was
 * verified); waits while that CciInstance is missing or unbound.
 */
export function resolveAttachment(
  obj: BlockVolumeObject,
  read: ReferenceReader,
): ReferenceResolution<VolumeRefs> {
  const to = obj.spec.attachTo;
  if (!to) return { resolved: true, refs: { instanceId: undefined } };
  if (to.instanceId !== undefined) return { resolved: true, refs: { instanceId: to.instanceId } };
  const name = to.cciInstanceRef?.name ?? "";
  const cci = read.get<CciInstance>(cciInstanceCrd, name);
  if (!cci) {
    return {
      resolved: false,
      reason: BLOCK_VOLUME_REASONS.names.CciInstanceNotFound,
      message: `spec.attachTo.cciInstanceRef: CciInstance ${name} does not exist in this namespace`,
    };
  }
  const instanceId = cci.status?.instanceId;
  if (!instanceId) {
    return {
      resolved: false,
      reason: BLOCK_VOLUME_REASONS.names.CciInstanceNotBound,
      message: `spec.attachTo.cciInstanceRef: CciInstance ${name} is not bound to an instance yet${stalledNote(cci)}`,
    };
  }
  return { resolved: true, refs: { instanceId } };
}

/** The status fields of a BlockVolume that come from the facts (managed/reconciler.ts keeps the rest). */
export const BLOCK_VOLUME_FACT_FIELDS = ["volumeId", "phase"] as const;

/**
 * The BlockVolume status (without conditions) from the facts and the remote record;
 * without a remote record, only {@link BLOCK_VOLUME_FACT_FIELDS} (the loop keeps the
 * previous remote fields).
 */
export function blockVolumeStatus(
  obj: BlockVolumeObject,
  facts: ManagedFacts,
  remote: RemoteVolume | undefined,
): BlockVolumeStatus {
  const prev = obj.status ?? {};
  const out: BlockVolumeStatus = {};
  if (remote) {
    if (remote.status !== undefined) out.state = capValue(remote.status);
    if (remote.instanceId !== undefined) out.attachedInstanceId = capValue(remote.instanceId);
    if (remote.sizeGB !== undefined) out.sizeGB = remote.sizeGB;
    if (remote.volumeType !== undefined) out.volumeType = capValue(remote.volumeType);
    if (remote.name !== undefined) out.name = capValue(remote.name);
    if (remote.createdTime !== undefined) out.createdTime = capValue(remote.createdTime);
    const description = stripClientTokenMarker(remote.description ?? "");
    if (description !== "") out.description = capFreeText(description);
  }
  if (facts.externalId !== undefined) out.volumeId = facts.externalId;
  out.phase = volumePhase({
    state: remote ? out.state : prev.state,
    bound: facts.externalId !== undefined,
    creating: facts.creating === true,
  });
  return out;
}

/** BlockVolumes of `cci`'s namespace whose spec.attachTo names it. */
function attachedVolumes(cci: KubeObject, cache: CacheReader): ObjectKey[] {
  const namespace = cci.metadata?.namespace ?? "";
  const name = cci.metadata?.name ?? "";
  return cache
    .list(blockVolumeCrd, namespace)
    .map((v) => v as unknown as BlockVolumeObject)
    .filter((v) => v.spec.attachTo?.cciInstanceRef?.name === name)
    .map((v) => ({ namespace, name: v.metadata.name ?? "" }));
}

/** Builds the managed kind of BlockVolume for a service client. */
export function blockVolumeKind(): ManagedKind<BlockVolumeObject, RemoteVolume, VolumeRefs> {
  const volumeLists = perAccount(() => volumeListSnapshot());
  return {
    resource: blockVolumeCrd,
    exportValues: (_obj, status) =>
      exportData({
        VOLUME_ID: status.volumeId,
        ATTACHED_INSTANCE_ID: status.attachedInstanceId,
      }),
    finalizer: BLOCK_VOLUME_FINALIZER,
    connect: (conn) => new BlockVolumeExternalClient(conn.service, volumeLists(conn)),
    adoptId: (obj) => obj.spec.volumeId,
    resolveReferences: resolveAttachment,
    status: (obj, facts, remote) =>
      blockVolumeStatus(obj, facts, remote) as Record<string, unknown>,
    statusId: (obj) => obj.status?.volumeId,
    factFields: BLOCK_VOLUME_FACT_FIELDS,
    fixedFields: (obj, remote, boundId) =>
      contradictions([
        ["volumeId", obj.spec.volumeId, boundId],
        ["name", obj.spec.name, remote.name],
        ["sizeGB", obj.spec.sizeGB, remote.sizeGB],
        ["volumeType", obj.spec.volumeType, remote.volumeType],
      ]),
  };
}

/** Tunables of the BlockVolume controller beyond the operator config (tests shorten them). */
export interface BlockVolumeControllerOptions {
  /** How long a new volume may be missing from the list after a create. Default: `service.listVisibilityWindowMs`. */
  visibilityGraceMs?: number;
}

/**
 * The BlockVolume controller, with `options` beyond the operator config (a
 * ControllerFactory: src/controllers/index.ts registers it).
 */
export function blockVolumeController(
  deps: ControllerDeps,
  options: BlockVolumeControllerOptions = {},
): ControllerDefinition {
  return managedController(blockVolumeKind(), {
    connections: deps.connections,
    loop: managedLoopOptions(deps.config, "BlockVolume", options.visibilityGraceMs),
    references: {
      watches: [{ resource: cciInstanceCrd, map: attachedVolumes }],
      reason: "read the CciInstances a BlockVolume is attached to",
    },
  });
}
