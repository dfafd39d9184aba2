/**
 * The loop's export step (after the status write): the connection details a kind
 * derives from its status (`ManagedKind.exportValues`) written into the ConfigMap that
 * `spec.exportTo.configMapName` names, in the object's namespace, owned by the object
 * (controller ownerReference: the garbage collector deletes it with the object). It
 * writes only when the values differ from the last ones this process wrote for the
 * object (after a restart, one write per object); a ConfigMap of that name that the
 * object does not own is left alone, with a Warning event.
 */
import { isDeepStrictEqual } from "node:util";
import type { KubeClient } from "../../runtime/kube.js";
import { statusCodeOf } from "../../runtime/kube-errors.js";
import type { DeclaredRule } from "../../runtime/permissions.js";
import type { KubeObject, ResourceDescriptor } from "../../runtime/resource.js";
import type { ManagedObject } from "./call.js";
import { toKube } from "./kube-casts.js";
import type { ManagedRun } from "./run.js";

/** Core v1 ConfigMaps. */
export const CONFIG_MAPS: ResourceDescriptor = {
  group: "",
  version: "v1",
  plural: "configmaps",
  kind: "ConfigMap",
  namespaced: true,
};

/** The label on every ConfigMap the export step writes. */
export const EXPORTED_LABEL = "aidc.io/exported-from";

/** What a ConfigMap written by the export step is: name, owner, data. */
interface Written {
  name: string;
  data: Record<string, string>;
}

/** The last export of each object (by uid) this process wrote. */
export class ExportMemory {
  private readonly last = new Map<string, Written>();

  /** Whether `w` is what was last written for `uid`. */
  same(uid: string, w: Written): boolean {
    return isDeepStrictEqual(this.last.get(uid), w);
  }

  /** Notes `w` as written for `uid`. */
  record(uid: string, w: Written): void {
    this.last.set(uid, w);
  }

  /** Forgets `uid` (its object is gone). */
  forget(uid: string): void {
    this.last.delete(uid);
  }
}

interface ExportSpec {
  exportTo?: { configMapName?: string };
}

/**
 * Writes the object's connection details when its spec asks and they changed. `status`
 * is the status just written.
 */
export async function exportConnectionDetails<T extends ManagedObject, R>(
  run: ManagedRun<T, R>,
  status: Record<string, unknown>,
  memory: ExportMemory,
): Promise<void> {
  const { kind, obj, ctx } = run;
  if (!kind.exportValues) return;
  await writeConnectionDetails(
    ctx.kube,
    kind.resource,
    toKube(obj),
    kind.exportValues(obj, status),
    memory,
    (note) => run.warning("ConnectionDetailsConflict", note),
  );
}

/**
 * Writes `data` into the ConfigMap of `obj`'s `spec.exportTo` (for a kind outside the
 * managed loop too): created owned by `obj`, patched when its data differs, nothing
 * when `data` is what this process last wrote for `obj`; `warn` says when a ConfigMap
 * of that name belongs to someone else.
 */
export async function writeConnectionDetails(
  kube: KubeClient,
  resource: ResourceDescriptor,
  obj: KubeObject,
  data: Record<string, string>,
  memory: ExportMemory,
  warn: (note: string) => void,
): Promise<void> {
  const name = (obj.spec as ExportSpec | undefined)?.exportTo?.configMapName;
  const uid = obj.metadata?.uid;
  const namespace = obj.metadata?.namespace;
  if (!name || !uid || !namespace) return;
  const wanted: Written = { name, data };
  if (memory.same(uid, wanted)) return;
  const owner = {
    apiVersion: `${resource.group}/${resource.version}`,
    kind: resource.kind,
    name: obj.metadata?.name ?? "",
    uid,
    controller: true,
    blockOwnerDeletion: true,
  };
  const configMap: KubeObject & { data: Record<string, string> } = {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: {
      name,
      namespace,
      labels: { [EXPORTED_LABEL]: resource.kind.toLowerCase() },
      ownerReferences: [owner],
    },
    data: wanted.data,
  };
  try {
    await kube.create(CONFIG_MAPS, configMap);
  } catch (err) {
    if (statusCodeOf(err) !== 409) throw err;
    const existing = await kube.get<KubeObject & { data?: Record<string, string> }>(CONFIG_MAPS, {
      namespace,
      name,
    });
    if (!existing) return; // gone meanwhile: the next reconcile creates it
    const owners = (existing.metadata?.ownerReferences ?? []) as {
      uid?: string;
      controller?: boolean;
    }[];
    if (owners.find((o) => o.controller)?.uid !== uid) {
      warn(
        `ConfigMap ${name} exists and is not owned by this object: connection details not written`,
      );
      memory.record(uid, wanted);
      return;
    }
    if (!isDeepStrictEqual(existing.data ?? {}, wanted.data)) {
      const removed = Object.keys(existing.data ?? {}).filter((k) => !(k in wanted.data));
      const patch = { ...wanted.data, ...Object.fromEntries(removed.map((k) => [k, null])) };
      await kube.patch(CONFIG_MAPS, { namespace, name }, { data: patch });
    }
  }
  memory.record(uid, wanted);
}

/** The RBAC rule of the ConfigMaps of `spec.exportTo`, for a kind that has the field. */
export const EXPORT_RULE: DeclaredRule = {
  apiGroups: [""],
  resources: ["configmaps"],
  verbs: ["get", "create", "patch"],
  reason: "write the ConfigMap of spec.exportTo (the garbage collector deletes it with its owner)",
};

/** `values` without its undefined and empty entries, every value as text (ConfigMap data). */
export function exportData(values: Record<string, unknown>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(values)) {
    if (v !== undefined && v !== null && v !== "") out[k] = String(v);
  }
  return out;
}
