/**
 * A NasVolume's LateInitialize (spec.managementPolicies, src/controllers/managed/policies.ts):
 * the unset capacityGB and mountPath filled from the storage, where the service's values
 * pass the spec's own rules.
 */
import { INTEGER_LIMITS, MOUNT_PATH_PATTERN } from "../../crds/fields.js";
import type { NasVolume as NasVolumeObject } from "../../crds/nasvolume.js";
import type { NasInstance } from "../../service/schemas/nas.js";
import { gb } from "./external.js";

/** The spec fields `remote` fills: capacityGB from its quota, mountPath from its own. */
export function nasLateInitialize(
  obj: NasVolumeObject,
  remote: NasInstance,
): Record<string, unknown> | undefined {
  const fields: Record<string, unknown> = {};
  const quota = gb(remote.quota);
  if (
    obj.spec.capacityGB === undefined &&
    Number.isInteger(quota) &&
    quota >= 1 &&
    quota <= INTEGER_LIMITS.capacityGB
  ) {
    fields.capacityGB = quota;
  }
  if (obj.spec.mountPath === undefined && MOUNT_PATH_PATTERN.test(remote.mountPath ?? "")) {
    fields.mountPath = remote.mountPath;
  }
  return fields;
}
