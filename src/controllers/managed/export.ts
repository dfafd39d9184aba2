/**
 * The loop's export step (after the status write): the connection details a kind
 * derives from its status (`ManagedKind.exportValues`) written into the ConfigMap that
 * `spec.exportTo.configMapName` names, in the object's namespace, owned by the object
 * (controller ownerReference: the garbage collector deletes it with the object). It
 * writes only when the values differ from the last ones this process wrote for the
 * object (after a restart, one write per object); otherwise a GET when due (they are not
 * watched, export-memory.ts) finds one deleted or edited by hand, written again. A ConfigMap of
 * that name that the object does not own is left alone, with a Warning event. A kind
 * with secret details (`ManagedKind.exportSecretValues`, the Bucket's S3 key pair,
 * present only while the operator's credentials export is on) writes them the same way
 * into the Secret of `spec.exportTo.secretName` while the kind allows it, and deletes
 * that Secret when it stops allowing it; the data is sent base64-encoded, so the
 * process's SecretRedactor (which knows the raw keys) does not blank it, and no key is
 * ever put into a message.
 *
 * The status records the names (`ExportedNames`); before a status write changes them,
 * `releaseRenamedExports` deletes what was written under a renamed or removed one (only
 * one written for the object: ownerReference and label), so a crash in between leaves
 * the old name recorded and the next reconcile deletes it, after a restart too.
 */
import { isDeepStrictEqual } from "node:util";
import type { KubeClient } from "../../runtime/kube.js";
import { statusCodeOf } from "../../runtime/kube-errors.js";
import type { DeclaredRule } from "../../runtime/permissions.js";
import type { KubeObject, ResourceDescriptor } from "../../runtime/resource.js";
import { SECRETS } from "../connections/secrets.js";
import type { ManagedObject } from "./call.js";
import { type ExportMemory, secretKeyOf, type Written } from "./export-memory.js";
import type { ManagedRun } from "./run.js";

/** Core v1 ConfigMaps. */
export const CONFIG_MAPS: ResourceDescriptor = {
  group: "",
  version: "v1",
  plural: "configmaps",
  kind: "ConfigMap",
  namespaced: true,
};

/** The label on every ConfigMap and Secret the export step writes. */
export const EXPORTED_LABEL = "aidc.io/exported-from";

interface ExportSpec {
  exportTo?: { configMapName?: string; secretName?: string };
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
  if (run.reconcileRequest !== undefined) memory.recheck(obj.metadata?.uid ?? "");
  await writeConnectionDetails(
    ctx.kube,
    kind.resource,
    obj,
    kind.exportValues(obj, status),
    memory,
    (note) => run.warning("ConnectionDetailsConflict", note),
  );
  if (!kind.exportSecretValues) return;
  const secretName = obj.spec.exportTo?.secretName;
  const uid = obj.metadata?.uid;
  if (!uid || !secretName) return;
  const details = await kind.exportSecretValues(obj);
  if ("refused" in details) {
    // Nothing is written, and a Secret this object owns (written while it was allowed)
    // is deleted; the kind's Synced condition says why. Looked at once per refusal.
    const refusal: Written = { name: secretName, data: { refused: details.refused } };
    if (memory.same(secretKeyOf(uid), refusal)) return;
    if (await deleteOwned(ctx.kube, SECRETS, kind.resource, obj, secretName)) {
      run.warning(details.reason, `Secret ${secretName} deleted: ${details.refused}`);
    }
    memory.record(secretKeyOf(uid), refusal);
    return;
  }
  await writeOwned(
    ctx.kube,
    SECRETS,
    kind.resource,
    obj,
    secretName,
    secretData(details.data),
    memory,
    secretKeyOf(uid),
    (note) => run.warning("ConnectionDetailsConflict", note),
  );
}

/** The status fields that record the names of `spec.exportTo` last reconciled. */
export interface ExportedNames {
  exportedConfigMapName?: string;
  exportedSecretName?: string;
}

/**
 * Deletes what the export step wrote for `obj` under a name its status records and
 * `names` (the names the next status write records) no longer has: a renamed or removed
 * configMapName, or secretName with `secrets` (a kind that writes Secrets, and so may
 * delete them). Only one written for `obj` (ownerReference and label) goes; its memory
 * is forgotten. Called before that status write: a crash in between leaves the old name
 * recorded, and the next reconcile deletes it then.
 */
export async function releaseRenamedExports(
  kube: KubeClient,
  resource: ResourceDescriptor,
  obj: KubeObject,
  names: ExportedNames,
  memory: ExportMemory,
  secrets = false,
): Promise<void> {
  const uid = obj.metadata?.uid;
  if (!uid) return;
  const recorded = (obj.status ?? {}) as ExportedNames;
  const targets = [
    ["exportedConfigMapName", CONFIG_MAPS, uid],
    ...(secrets ? [["exportedSecretName", SECRETS, secretKeyOf(uid)] as const] : []),
  ] as const;
  for (const [field, target, key] of targets) {
    const before = recorded[field];
    if (typeof before !== "string" || before === names[field]) continue;
    await deleteOwned(kube, target, resource, obj, before);
    memory.forgetKey(key);
  }
}

/**
 * Deletes the object `name` of `target` in `obj`'s namespace if the export step wrote it
 * for `obj` (its controller ownerReference and label); whether it did.
 */
async function deleteOwned(
  kube: KubeClient,
  target: ResourceDescriptor,
  resource: ResourceDescriptor,
  obj: KubeObject,
  name: string,
): Promise<boolean> {
  const namespace = obj.metadata?.namespace;
  if (!namespace) return false;
  const existing = await kube.get<KubeObject>(target, { namespace, name });
  if (!existing || !controlledBy(existing, obj.metadata?.uid)) return false;
  if (existing.metadata?.labels?.[EXPORTED_LABEL] !== resource.kind.toLowerCase()) return false;
  return kube.delete(target, { namespace, name }, existing.metadata?.uid);
}

/** Whether `obj`'s controller ownerReference is the object `uid`. */
function controlledBy(obj: KubeObject, uid: string | undefined): boolean {
  const owners = (obj.metadata?.ownerReferences ?? []) as { uid?: string; controller?: boolean }[];
  return uid !== undefined && owners.find((o) => o.controller)?.uid === uid;
}

/** `data` with every value base64-encoded (a Secret's `data`). */
export function secretData(data: Record<string, string>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(data).map(([k, v]) => [k, Buffer.from(v, "utf8").toString("base64")]),
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
  if (!name || !uid) return;
  await writeOwned(kube, CONFIG_MAPS, resource, obj, name, data, memory, uid, warn);
}

/**
 * Writes `data` as the `data` of the object `name` of `target` (a ConfigMap, or a
 * Secret with `data` encoded) in `obj`'s namespace: created owned by `obj`, patched
 * when its data differs; when it is what `memory` holds under `memoryKey`, only read
 * and written again if it is gone or its data was changed.
 */
async function writeOwned(
  kube: KubeClient,
  target: ResourceDescriptor,
  resource: ResourceDescriptor,
  obj: KubeObject,
  name: string,
  data: Record<string, string>,
  memory: ExportMemory,
  memoryKey: string,
  warn: (note: string) => void,
): Promise<void> {
  const uid = obj.metadata?.uid;
  const namespace = obj.metadata?.namespace;
  if (!uid || !namespace) return;
  const wanted: Written = { name, data };
  // Written before: when due, one read (ConfigMaps and Secrets are not watched) says
  // whether it is still there as written; one deleted or edited by hand is written again.
  if (memory.same(memoryKey, wanted)) {
    if (!memory.due(memoryKey)) return;
    const now = await kube.get<KubeObject & { data?: Record<string, string> }>(target, {
      namespace,
      name,
    });
    if (now && (!controlledBy(now, uid) || isDeepStrictEqual(now.data ?? {}, data))) {
      memory.seen(memoryKey);
      return;
    }
  }
  const owner = {
    apiVersion: `${resource.group}/${resource.version}`,
    kind: resource.kind,
    name: obj.metadata?.name ?? "",
    uid,
    controller: true,
    blockOwnerDeletion: true,
  };
  const written: KubeObject & { data: Record<string, string> } = {
    apiVersion: "v1",
    kind: target.kind,
    metadata: {
      name,
      namespace,
      labels: { [EXPORTED_LABEL]: resource.kind.toLowerCase() },
      ownerReferences: [owner],
    },
    data: wanted.data,
  };
  try {
    await kube.create(target, written);
  } catch (err) {
    if (statusCodeOf(err) !== 409) throw err;
    const existing = await kube.get<KubeObject & { data?: Record<string, string> }>(target, {
      namespace,
      name,
    });
    if (!existing) return; // gone meanwhile: the next reconcile creates it
    if (!controlledBy(existing, uid)) {
      warn(
        `${target.kind} ${name} exists and is not owned by this object: connection details not written`,
      );
      memory.record(memoryKey, wanted);
      return;
    }
    if (!isDeepStrictEqual(existing.data ?? {}, wanted.data)) {
      const removed = Object.keys(existing.data ?? {}).filter((k) => !(k in wanted.data));
      const patch = { ...wanted.data, ...Object.fromEntries(removed.map((k) => [k, null])) };
      await kube.patch(target, { namespace, name }, { data: patch });
    }
  }
  memory.record(memoryKey, wanted);
}

/** The RBAC rule of the ConfigMaps of `spec.exportTo`, for a kind that has the field. */
export const EXPORT_RULE: DeclaredRule = {
  apiGroups: [""],
  resources: ["configmaps"],
  verbs: ["get", "create", "patch", "delete"],
  reason:
    "write the ConfigMap of spec.exportTo, and delete one it wrote under a renamed or removed name (the garbage collector deletes it with its owner)",
};

/** The RBAC rule of the Secrets of `spec.exportTo.secretName`, for a kind with secret details. */
export const SECRET_EXPORT_RULE: DeclaredRule = {
  apiGroups: [""],
  resources: ["secrets"],
  verbs: ["get", "create", "patch", "delete"],
  reason:
    "write the Secret of spec.exportTo.secretName (a Bucket's S3 key pair, while its connection allows it; deleted with its owner, when the connection stops allowing it, or when secretName is renamed or removed)",
};

/** `values` without its undefined and empty entries, every value as text (ConfigMap data). */
export function exportData(values: Record<string, unknown>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(values)) {
    if (v !== undefined && v !== null && v !== "") out[k] = String(v);
  }
  return out;
}
