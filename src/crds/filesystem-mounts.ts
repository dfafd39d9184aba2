/**
 * The mounts of a FileSystem (filesystem.ts): where each is mounted in the spec, and
 * how each stands in the status.
 */
import { z } from "zod";
import { described, withRules } from "./definition.js";
import { cciInstanceTarget, mountPath } from "./fields.js";
import { optionalString } from "./status-fields.js";

/** Where a file system is mounted: a CciInstance of the namespace, or an instance id. */
export const fileSystemMountTargetSchema = cciInstanceTarget({
  description: "The CCI instance the file system is mounted on.",
  ref: "The CciInstance (same namespace) whose instance the file system is mounted on; its instanceId is used once it has one. Exactly one of cciInstanceRef and instanceId.",
  id: "Id of the CCI instance to mount the file system on. Exactly one of cciInstanceRef and instanceId.",
  message: "mounts[].target: exactly one of cciInstanceRef or instanceId must be set",
});

/** One mount of the file system. */
export const fileSystemMountSchema = z
  .object({
    name: described(
      z
        .string()
        .min(1)
        .max(63)
        .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/),
      "Name of the mount within this object (a DNS label): the key of its entry in status.mounts.",
    ),
    target: fileSystemMountTargetSchema,
    mountPath: mountPath(
      "Path on the instance: 2 to 64 letters, digits, underscores and slashes; the service's default when omitted. A change removes the mount and mounts it again at the new path.",
    ).optional(),
  })
  .meta({
    description:
      "A mount of the file system on a CCI instance. The instance is the mount's identity: the file system is mounted at most once per instance.",
  });
/** One mount of a FileSystem. */
export type FileSystemMountSpec = z.infer<typeof fileSystemMountSchema>;

/** The mounts of a FileSystem's spec: at most 16, one per instance. */
export const mountsSchema = withRules(
  z
    .array(fileSystemMountSchema)
    .max(16)
    .meta({
      description:
        "The mounts of the file system (at most 16, one per instance). A mount removed from the list is removed from the service where the remove operation exists, and otherwise reported in status.",
      "x-kubernetes-list-type": "map",
      "x-kubernetes-list-map-keys": ["name"],
    }),
  {
    rule: "self.all(a, !has(a.target.instanceId) || self.exists_one(b, has(b.target.instanceId) && b.target.instanceId == a.target.instanceId))",
    message:
      "mounts[].target.instanceId values must be distinct: a file system is mounted at most once per instance",
  },
  {
    rule: "self.all(a, !has(a.target.cciInstanceRef) || self.exists_one(b, has(b.target.cciInstanceRef) && b.target.cciInstanceRef.name == a.target.cciInstanceRef.name))",
    message:
      "mounts[].target.cciInstanceRef names must be distinct: a file system is mounted at most once per instance",
  },
);

/** The state of one mount, as the operator sees it. */
export const MountState = z.enum([
  "Pending",
  "Creating",
  "Mounted",
  "Removing",
  "RemovalNotPossible",
  "Failed",
  "Unknown",
]);
/** The state of one mount. */
export type MountState = z.infer<typeof MountState>;

/** One mount in status: a mount of the spec, or one being (or not able to be) removed. */
export const fileSystemMountStatusSchema = z
  .object({
    name: described(z.string(), "The mount's name in spec.mounts (or the name it had there)."),
    state: described(
      MountState,
      "Pending (waiting for its instance or the file system, or not made: spec.managementPolicies has no Update), Creating, Mounted, Removing (removed from the spec, being removed), RemovalNotPossible (removed from the spec, but the service has no remove operation: it stays), Failed, or Unknown (a state word the operator does not know).",
    ),
    instanceId: optionalString("Id of the CCI instance the file system is mounted on."),
    mountId: optionalString("Id of the mount in the service."),
    address: optionalString("Where the instance reaches the file system (e.g. host:/export)."),
    mountPath: optionalString("Path on the instance."),
    remoteState: optionalString("The service's state word for the mount, verbatim."),
    message: optionalString("Why the mount is not Mounted, when known."),
  })
  .meta({ description: "One mount of the file system." });
/** One mount in a FileSystem's status. */
export type FileSystemMountStatus = z.infer<typeof fileSystemMountStatusSchema>;
