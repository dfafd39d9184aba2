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
import { statusCodeOf } from "../../runtime/kube.js";
import type { KubeObject, ResourceDescriptor } from "../../runtime/resource.js";
import type { ManagedObject } from "./call.js";
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
  const name = (obj.spec as ExportSpec | undefined)?.exportTo?.configMapName;
  const uid = obj.metadata?.uid;
  const namespace = obj.metadata?.namespace;
  if (!kind.exportValues || !name || !uid || !namespace) return;
  const wanted: Written = { name, data: kind.exportValues(obj, status) };
  if (memory.same(uid, wanted)) return;
  const owner = {
    apiVersion: `${kind.resource.group}/${kind.resource.version}`,
    kind: kind.resource.kind,
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
      labels: { [EXPORTED_LABEL]: kind.resource.kind.toLowerCase() },
      ownerReferences: [owner],
    },
    data: wanted.data,
  };
  try {
    await ctx.kube.create(CONFIG_MAPS, configMap);
  } catch (err) {
    if (statusCodeOf(err) !== 409) throw err;
    const existing = await ctx.kube.get<KubeObject & { data?: Record<string, string> }>(
      CONFIG_MAPS,
      { namespace, name },
    );
    if (!existing) return; // gone meanwhile: the next reconcile creates it
    const owners = (existing.metadata?.ownerReferences ?? []) as {
      uid?: string;
      controller?: boolean;
    }[];
    const controller = owners.find((o) => o.controller);
    if (controller?.uid !== uid) {
      run.warning(
        "ConnectionDetailsConflict",
        `ConfigMap ${name} exists and is not owned by this object: connection details not written`,
      );
      memory.record(uid, wanted);
      return;
    }
    if (!isDeepStrictEqual(existing.data ?? {}, wanted.data)) {
      const removed = Object.keys(existing.data ?? {}).filter((k) => !(k in wanted.data));
      const data = { ...wanted.data, ...Object.fromEntries(removed.map((k) => [k, null])) };
      await ctx.kube.patch(CONFIG_MAPS, { namespace, name }, { data });
    }
  }
  memory.record(uid, wanted);
}

/** `values` without its undefined and empty entries, every value as text (ConfigMap data). */
export function exportData(values: Record<string, unknown>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(values)) {
    if (v !== undefined && v !== null && v !== "") out[k] = String(v);
  }
  return out;
}
