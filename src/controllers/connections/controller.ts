/**
 * The ServiceConnection controller: keeps each connection's status (Ready from a cheap
 * authenticated call with its key, the number of objects using it), holds its deletion
 * with a finalizer while objects use it (as Crossplane's ProviderConfigUsage; an unused
 * connection carries none, so it is deleted even without the operator), and,
 * when its spec or its Secrets change, reconciles the objects that use it again (their
 * holds lifted: a refused key may be accepted now, a namespace allowed). The routing of
 * the objects' calls is the registry's (registry.ts). It is steered as the managed kinds
 * are: paused, it is neither checked nor changed; reconcile-now checks it at once.
 */
import { pollIntervalFor } from "../../config/schema.js";
import { allCrds, REASONS } from "../../crds/index.js";
import { type ServiceConnection, serviceConnectionCrd } from "../../crds/serviceconnection.js";
import type { CacheReader } from "../../runtime/cache.js";
import {
  type ControllerDefinition,
  controller,
  type ReconcileContext,
} from "../../runtime/controller.js";
import { ensureFinalizer, removeFinalizer } from "../../runtime/lifecycle-writes.js";
import {
  type ConditionInput,
  getCondition,
  hasFinalizer,
  patchStatus,
  setCondition,
  withKstatusConditions,
} from "../../runtime/object-writes.js";
import type { KubeObject, ObjectKey } from "../../runtime/resource.js";
import type { ControllerDeps } from "../controller-factory.js";
import { failedSyncCondition } from "../health-conditions.js";
import type { ManagedObject } from "../managed/call.js";
import { paused } from "../managed/condition-writes.js";
import { isPaused, lastHandled, reconcileRequest } from "../managed/decisions.js";
import { managedPermissions } from "../managed/managed-controller.js";
import { NAMESPACES, type ServiceConnections } from "./registry.js";
import { SECRETS, secretRules } from "./secrets.js";
import { type ConnectionCheck, inUseCondition, readyConditionOf } from "./status.js";

/** The finalizer that holds a connection while objects use it. */
export const CONNECTION_FINALIZER = "aidc.io/serviceconnection";

/**
 * The finalizer of one operator: a shard sees only its own objects, so each holds the
 * connection with a finalizer of its own (`aidc.io/serviceconnection-<shard>`).
 */
export function connectionFinalizer(shardKey: string | undefined): string {
  return shardKey ? `${CONNECTION_FINALIZER}-${shardKey}` : CONNECTION_FINALIZER;
}

/** The kinds whose objects use connections: every namespaced kind. */
const USER_KINDS = allCrds.filter((d) => d.namespaced);

/** The objects, of every kind, that use connection `name` (by connectionRef or namespace). */
export function usersOf(
  connections: ServiceConnections,
  cache: CacheReader,
  name: string,
): KubeObject[] {
  return USER_KINDS.flatMap((kind) =>
    cache.list(kind).filter((obj) => connections.chosenName(obj) === name),
  );
}

/**
 * The ServiceConnection controller (a ControllerFactory: src/controllers/index.ts
 * registers it): the Ready check runs again every ServiceConnection poll interval; with
 * a `shardKey` in the config, the operator holds the connection for its own shard's
 * objects only, with its own finalizer, and leaves the status to the unsharded operator.
 */
export function serviceConnectionController(deps: ControllerDeps): ControllerDefinition {
  const { connections } = deps;
  const { shardKey } = deps.config;
  const pollIntervalMs = pollIntervalFor(deps.config, "ServiceConnection");
  const finalizer = connectionFinalizer(shardKey);
  const writesStatus = shardKey === undefined;
  /** What each connection's objects were last retried for: uid, generation, Secret versions. */
  const seen = new Map<string, string>();
  /** The last Ready check of each connection, and when it ran. */
  const checked = new Map<string, { at: number; fingerprint: string; ready: ConditionInput }>();

  const check = async (conn: ServiceConnection, signal: AbortSignal): Promise<ConnectionCheck> => {
    const problem = connections.secrets.problemOf(conn.spec);
    if (problem) return { outcome: "secretUnreadable", problem };
    const unavailable = connections.identities.problemOf(conn.spec);
    if (unavailable) return { outcome: "webIdentityUnavailable", problem: unavailable };
    try {
      // Its client is made here: one it cannot make (a proxy it cannot use) fails the check.
      const resolved = connections.byName(conn.metadata.name ?? "");
      if (!resolved) return { outcome: "failed", error: new Error("the connection is gone") };
      // Authenticated and uncached: one page of one CCI instance.
      await resolved.service.account
        .withCall({ routine: false, signal })
        .cci.page({ pageNo: 1, pageSize: 1 });
      return { outcome: "accepted", baseUrl: conn.spec.baseUrl };
    } catch (error) {
      return { outcome: "failed", error };
    }
  };

  const writeStatus = async (
    ctx: ReconcileContext,
    conn: ServiceConnection,
    ready: ConditionInput,
    users: number,
  ) => {
    const generation = conn.metadata.generation;
    const now = ctx.clock.now();
    let conditions = setCondition(conn.status?.conditions, ready, generation, now);
    conditions = setCondition(
      conditions,
      { type: "Synced", status: "True", reason: "ReconcileSuccess", message: "" },
      generation,
      now,
    );
    conditions = withKstatusConditions(conditions, REASONS, generation, now);
    const at = checked.get(conn.metadata.name ?? "")?.at;
    await patchStatus(ctx.kube, serviceConnectionCrd, conn as unknown as KubeObject, {
      ...(generation !== undefined ? { observedGeneration: generation } : {}),
      conditions,
      objectsUsing: users,
      ...(at !== undefined ? { lastCheckedTime: new Date(at).toISOString() } : {}),
      ...lastHandled(conn),
    });
  };

  const reconcile = async (key: ObjectKey, ctx: ReconcileContext) => {
    connections.attach(ctx.cache);
    const name = key.name;
    const found = ctx.cache.get<KubeObject>(serviceConnectionCrd, key);
    if (!found) {
      connections.forget(name);
      seen.delete(name);
      checked.delete(name);
      return {};
    }
    // Paused: no check and no finalizer change, so a held deletion waits (decisions.ts).
    if (isPaused(found)) {
      if (!writesStatus) return {};
      const held = hasFinalizer(found, finalizer) ? { finalizer } : {};
      return paused(ctx, { resource: serviceConnectionCrd, ...held }, found as ManagedObject);
    }
    const users = usersOf(connections, ctx.cache, name);
    if (found.metadata?.deletionTimestamp) {
      if (!hasFinalizer(found, finalizer)) return {};
      if (users.length > 0) {
        if (!writesStatus) return { requeueAfterMs: pollIntervalMs };
        await writeStatus(
          ctx,
          found as unknown as ServiceConnection,
          inUseCondition(users),
          users.length,
        );
        // The watches of the users' kinds reconcile it again as they go.
        return { requeueAfterMs: pollIntervalMs };
      }
      connections.forget(name);
      await removeFinalizer(ctx.kube, serviceConnectionCrd, found, finalizer);
      return {};
    }
    // The finalizer only while objects use it: an unused connection is deleted at once,
    // also when the operator is gone (a chart's connection at `helm uninstall`).
    const held = hasFinalizer(found, finalizer);
    const current =
      users.length > 0 && !held
        ? await ensureFinalizer(ctx.kube, serviceConnectionCrd, found, finalizer)
        : users.length === 0 && held
          ? await removeFinalizer(ctx.kube, serviceConnectionCrd, found, finalizer)
          : found;
    if (!current) return {};
    const conn = current as unknown as ServiceConnection;
    const fingerprint = `${conn.metadata.uid}/${conn.metadata.generation}/${connections.secrets.versionsOf(conn.spec)}`;
    if (seen.get(name) !== fingerprint) {
      seen.set(name, fingerprint);
      // A new key, a changed allow-list or base URL: its objects try again now.
      connections.changed(name);
    }
    if (!writesStatus) return { requeueAfterMs: pollIntervalMs };
    const last = checked.get(name);
    const now = ctx.clock.now().getTime();
    let ready = last?.ready ?? getCondition(conn.status?.conditions, "Ready");
    const due = !last || now - last.at >= pollIntervalMs || reconcileRequest(conn) !== undefined;
    if (due || last.fingerprint !== fingerprint || !ready) {
      const result = await check(conn, ctx.signal);
      // A saturated limit says nothing about the key: keep what the last check found.
      const throttled =
        result.outcome === "failed" &&
        (result.error as { reason?: unknown } | null)?.reason === "ConnectionThrottled";
      if (!throttled || !ready) {
        ready = readyConditionOf(result);
        checked.set(name, { at: now, fingerprint, ready });
      }
    }
    await writeStatus(ctx, conn, ready, users.length);
    return { requeueAfterMs: pollIntervalMs };
  };

  const builder = controller("serviceconnection").for(serviceConnectionCrd);
  // A user's arrival or departure reconciles the connection it uses (count, finalizer,
  // deletion wait); its connectionRef is immutable, so no update changes which one.
  const arrivals = { when: { events: ["add", "delete"] as const } };
  for (const kind of USER_KINDS) builder.watches(kind, connections.usedKeys, arrivals);
  builder.watches(NAMESPACES, (_ns, cache) =>
    cache.list(serviceConnectionCrd).map((c) => ({ namespace: "", name: c.metadata?.name ?? "" })),
  );
  const secretNamespace = connections.secretNamespace;
  if (secretNamespace) {
    // Also tells the clients of the connections naming the Secret their key at once.
    builder.watches(SECRETS, connections.secretChanged, { namespaces: [secretNamespace] });
  }
  return builder
    .permissions([
      ...managedPermissions(serviceConnectionCrd).map((r) => ({
        ...r,
        grantedIn: "cluster" as const,
      })),
      {
        apiGroups: [""],
        resources: ["namespaces"],
        verbs: ["get", "list", "watch"],
        reason:
          "read namespaces: their connection annotation and the labels connections allow them by",
        grantedIn: "cluster",
      },
      ...USER_KINDS.map((k) => ({
        apiGroups: [k.group],
        resources: [k.plural],
        verbs: ["get", "list", "watch"],
        reason: "count the objects using each connection",
      })),
      ...secretRules(secretNamespace),
    ])
    .onError(async (_key, err, ctx, found) => {
      if (!found) return;
      const conn = found as unknown as ServiceConnection;
      const now = ctx.clock.now();
      let conditions = setCondition(
        conn.status?.conditions,
        failedSyncCondition(err),
        conn.metadata.generation,
        now,
      );
      conditions = withKstatusConditions(conditions, REASONS, conn.metadata.generation, now);
      await patchStatus(ctx.kube, serviceConnectionCrd, found, { ...conn.status, conditions });
    })
    .reconcile(reconcile);
}
