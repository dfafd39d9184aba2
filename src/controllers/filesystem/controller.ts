/**
 * The FileSystem controller: the generic managed reconciler (../managed, declared with
 * `managedController`) with the file system ExternalClient (external.ts), the mount
 * targets resolved from CciInstances (references.ts) and the status (status.ts).
 */
import { cciInstanceCrd } from "../../crds/cciinstance.js";
import { type FileSystem as FileSystemObject, fileSystemCrd } from "../../crds/filesystem.js";
import type { CacheReader } from "../../runtime/cache.js";
import type { ControllerDefinition } from "../../runtime/controller.js";
import type { KubeObject, ObjectKey } from "../../runtime/resource.js";
import type { ControllerDeps } from "../controller-factory.js";
import type { ManagedKind } from "../managed/external-client.js";
import { contradictions } from "../managed/fixed-fields.js";
import { managedController, managedLoopOptions } from "../managed/managed-controller.js";
import { FileSystemExternalClient } from "./external.js";
import type { FileSystemRefs, FileSystemRemote } from "./mounts.js";
import { mountTargetResolver } from "./references.js";
import { FILE_SYSTEM_FACT_FIELDS, fileSystemExport, fileSystemStatus } from "./status.js";

/** The finalizer of FileSystems. */
export const FILE_SYSTEM_FINALIZER = "aidc.io/filesystem";

/** The FileSystems of `cci`'s namespace with a mount on it (by cciInstanceRef). */
function mountingOn(cci: KubeObject, cache: CacheReader): ObjectKey[] {
  const namespace = cci.metadata?.namespace ?? "";
  const name = cci.metadata?.name ?? "";
  return cache
    .list(fileSystemCrd, namespace)
    .map((o) => o as unknown as FileSystemObject)
    .filter((fs) => (fs.spec.mounts ?? []).some((m) => m.target.cciInstanceRef?.name === name))
    .map((fs) => ({ namespace, name: fs.metadata.name ?? "" }));
}

/** Tunables beyond the operator config (tests shorten them). */
export interface FileSystemControllerOptions {
  /** How long a new file system may be missing from the list after a create. Default: `service.listVisibilityWindowMs`. */
  visibilityGraceMs?: number;
}

/**
 * The FileSystem controller, with `options` beyond the operator config (a
 * ControllerFactory: src/controllers/index.ts registers it).
 */
export function fileSystemController(
  deps: ControllerDeps,
  options: FileSystemControllerOptions = {},
): ControllerDefinition {
  const kind: ManagedKind<FileSystemObject, FileSystemRemote, FileSystemRefs> = {
    resource: fileSystemCrd,
    exportValues: (_obj, status) => fileSystemExport(status),
    finalizer: FILE_SYSTEM_FINALIZER,
    connect: (conn) => new FileSystemExternalClient(conn.service),
    adoptId: (obj) => obj.spec.fileSystemId,
    resolveReferences: mountTargetResolver(deps.config.adoption.namespaces),
    status: (obj, facts, remote) => fileSystemStatus(obj, facts, remote) as Record<string, unknown>,
    statusId: (obj) => obj.status?.fileSystemId,
    factFields: FILE_SYSTEM_FACT_FIELDS,
    fixedFields: (obj, { fs }, boundId) =>
      contradictions([
        ["fileSystemId", obj.spec.fileSystemId, boundId],
        ["name", obj.spec.name, fs.name],
        ["sizeGB", obj.spec.sizeGB, fs.sizeGB],
        ["type", obj.spec.type, fs.type],
        ["protocol", obj.spec.protocol, fs.protocol],
        ["aidcId", obj.spec.aidcId, fs.aidcId],
      ]),
  };
  return managedController(kind, {
    connections: deps.connections,
    loop: managedLoopOptions(deps.config, "FileSystem", options.visibilityGraceMs),
    references: {
      watches: [{ resource: cciInstanceCrd, map: mountingOn }],
      reason: "read the CciInstances a file system is mounted on",
    },
  });
}
