/**
 * The catalog mirror: per connection (the operator's default one and each
 * ServiceConnection), the service's training specifications and NAS products as
 * cluster-scoped TrainingProduct and NasProduct objects (src/crds/trainingproduct.ts,
 * nasproduct.ts). Its keys are ServiceConnection names, plus {@link DEFAULT_KEY} for the
 * default connection. A reconcile reads the catalogs when a refresh is due
 * (refresh.ts) and writes only the differences (mirror.ts), so an unchanged catalog
 * writes nothing; a hand edit or deletion of a product is put back from the last read
 * without asking the service.
 */
import { CATALOG_LABELS, type CatalogStatus } from "../../crds/catalog.js";
import { nasProductCrd } from "../../crds/nasproduct.js";
import { nasVolumeCrd } from "../../crds/nasvolume.js";
import { serviceConnectionCrd } from "../../crds/serviceconnection.js";
import { trainingJobCrd } from "../../crds/trainingjob.js";
import { trainingProductCrd } from "../../crds/trainingproduct.js";
import type { CacheReader } from "../../runtime/cache.js";
import {
  type ControllerDefinition,
  controller,
  type ReconcileContext,
} from "../../runtime/controller.js";
import { RetryableError } from "../../runtime/errors.js";
import type { KubeObject, ObjectKey } from "../../runtime/resource.js";
import type { ServiceClient } from "../../service/client.js";
import { SECRETS, secretRules } from "../connections/secrets.js";
import type { ControllerDeps } from "../controller-factory.js";
import { STEERING_ANNOTATIONS } from "../managed/decisions.js";
import { nasProductObjects, trainingProductObjects } from "./mirror.js";
import { connectionLabelValue } from "./naming.js";
import { type ConnectionMemory, knowsCode, refreshDue } from "./refresh.js";
import { UNKNOWN_PRODUCT_REASONS } from "./refused-objects.js";
import { readCatalogs } from "./service-read.js";
import { CATALOG_KINDS, ProductWrites } from "./writes.js";

/** The key of the default connection's catalogs: `_` is in no ServiceConnection name. */
export const DEFAULT_KEY: ObjectKey = { namespace: "", name: "_default" };

/** The watch of the kinds that refuse unknown codes: only objects refused so reach its map. */
const refused = { when: { reasons: UNKNOWN_PRODUCT_REASONS } };

/** Tunables of the catalog mirror beyond the operator config (tests shorten them). */
export interface CatalogMirrorOptions {
  /** The shortest time between two reads for refused objects; default `REFUSAL_REFRESH_GAP_MS`. */
  refusalGapMs?: number;
}

/** The connection a key stands for: its name (undefined: the default) and client. */
interface KeyConnection {
  name: string | undefined;
  service: ServiceClient;
  /** The ServiceConnection object (absent for the default connection). */
  object?: KubeObject;
  version: string;
}

const requestOf = (obj: KubeObject | undefined) =>
  obj?.metadata?.annotations?.[STEERING_ANNOTATIONS.reconcileRequestedAt];

/**
 * The catalog mirror controller, with `options` beyond the operator config (a
 * ControllerFactory: src/controllers/index.ts registers it): every connection of the
 * process (the default one and each ServiceConnection's) has its catalogs read again
 * every `catalog.refreshIntervalMs`.
 */
export function catalogMirrorController(
  deps: ControllerDeps,
  options: CatalogMirrorOptions = {},
): ControllerDefinition {
  const { connections } = deps;
  const { refreshIntervalMs } = deps.config.catalog;
  const { refusalGapMs } = options;
  const memories = new Map<string, ConnectionMemory>();
  const memoryOf = (name: string) => {
    let m = memories.get(name);
    if (!m) {
      m = { handled: new Map(), refusedCodes: new Set() };
      memories.set(name, m);
    }
    return m;
  };
  const writes = new ProductWrites();

  const productsOf = (cache: CacheReader, name: string | undefined) => {
    const label = connectionLabelValue(name);
    return CATALOG_KINDS.map((kind) =>
      cache.list(kind).filter((o) => o.metadata?.labels?.[CATALOG_LABELS.connection] === label),
    );
  };

  const resolve = (key: ObjectKey, cache: CacheReader): KeyConnection | undefined => {
    if (key.name === DEFAULT_KEY.name) {
      return { name: undefined, service: connections.default.service, version: "" };
    }
    const object = cache.get(serviceConnectionCrd, key);
    const resolved =
      object && !object.metadata?.deletionTimestamp ? connections.byName(key.name) : undefined;
    if (!object || !resolved) return undefined;
    const { uid, generation } = object.metadata ?? {};
    return { name: key.name, service: resolved.service, object, version: `${uid}/${generation}` };
  };

  const reconcile = async (key: ObjectKey, ctx: ReconcileContext) => {
    connections.attach(ctx.cache);
    const conn = resolve(key, ctx.cache);
    if (!conn) {
      // The ServiceConnection is gone (or going): so are its catalogs.
      memories.delete(key.name);
      const [training = [], nas = []] = productsOf(ctx.cache, key.name);
      await writes.apply(ctx.kube, trainingProductCrd, undefined, [], training);
      await writes.apply(ctx.kube, nasProductCrd, undefined, [], nas);
      return {};
    }
    const memory = memoryOf(key.name);
    const [training = [], nas = []] = productsOf(ctx.cache, conn.name);
    const requesters = [...(conn.object ? [conn.object] : []), ...training, ...nas];
    const pending = requesters.filter((o) => {
      const value = requestOf(o);
      const id = `${o.kind}/${o.metadata?.name}`;
      // The connection's own status echoes its controller's handling, not the mirror's.
      const echoed = o !== conn.object && (o.status as CatalogStatus)?.lastHandledReconcileAt;
      return value !== undefined && memory.handled.get(id) !== value && echoed !== value;
    });
    const now = ctx.clock.now().getTime();
    const decision = refreshDue({
      memory,
      now,
      intervalMs: refreshIntervalMs,
      connectionVersion: conn.version,
      pendingRequests: pending.length,
      ...(refusalGapMs !== undefined ? { refusalGapMs } : {}),
    });
    if (decision.due) {
      // Asked for (a request, a refused code): the service's answer now, not the cache's.
      if (decision.why === "requested" || decision.why === "refusedCode") {
        conn.service.forgetCatalogs();
      }
      // A refresh on its interval is routine observation (the routine budget); the
      // first read, a changed connection, a request or a refused code are not.
      const service = conn.service.account.withCall({
        routine: decision.why === "interval",
        signal: ctx.signal,
      });
      try {
        memory.read = await readCatalogs(service, memory.read, now, conn.version);
      } catch (err) {
        // Whatever the cause (a refused read too), read again on the key's backoff.
        throw new RetryableError(
          "CatalogReadFailed",
          `reading the product catalogs of ${conn.name ? `ServiceConnection ${conn.name}` : "the default connection"} failed: ${(err as Error).message}; read again with backoff`,
          { cause: err },
        );
      }
      memory.refusedCodes.clear();
      ctx.log.debug({ why: decision.why }, "read the product catalogs");
    }
    const last = memory.read;
    if (!last) return {};
    const sent =
      (await writes.apply(
        ctx.kube,
        trainingProductCrd,
        conn.object,
        trainingProductObjects(conn.name, last.training),
        training,
      )) +
      (await writes.apply(
        ctx.kube,
        nasProductCrd,
        conn.object,
        nasProductObjects(conn.name, last.nas, last.available),
        nas,
      ));
    if (sent > 0) ctx.log.info({ writes: sent }, "product catalog mirrored");
    if (decision.due) {
      for (const o of pending) {
        const value = requestOf(o) ?? "";
        memory.handled.set(`${o.kind}/${o.metadata?.name}`, value);
        if (o === conn.object) continue;
        await writes.echoRequest(ctx.kube, o, value);
      }
    }
    const next = refreshDue({
      memory,
      now: ctx.clock.now().getTime(),
      intervalMs: refreshIntervalMs,
      connectionVersion: conn.version,
      pendingRequests: 0,
      ...(refusalGapMs !== undefined ? { refusalGapMs } : {}),
    });
    return { requeueAfterMs: next.due ? 1 : next.inMs, priority: "low" as const };
  };

  /** A product's change, unless it is the echo of the mirror's own write: its connection's key. */
  const productKeys = (obj: KubeObject): ObjectKey[] => {
    if (writes.isOwnEcho(obj)) return [];
    const label = obj.metadata?.labels?.[CATALOG_LABELS.connection];
    if (!label) return [];
    if (label === connectionLabelValue(undefined)) return [DEFAULT_KEY];
    // The label of a long name is shortened; spec.connection has it whole.
    const conn = (obj.spec as { connection?: string } | undefined)?.connection ?? label;
    return [{ namespace: "", name: conn }];
  };

  /**
   * An object refused for a product code (the watch lets only those through,
   * `refused`) its connection's last catalog lacks: that connection's key.
   */
  const refusedKeys = (obj: KubeObject): ObjectKey[] => {
    const code = (obj.spec as { productCode?: unknown } | undefined)?.productCode;
    if (typeof code !== "string") return [];
    const name = connections.chosenName(obj);
    const memory = memoryOf(name ?? DEFAULT_KEY.name);
    if (knowsCode(memory, code) || memory.refusedCodes.has(code)) return [];
    memory.refusedCodes.add(code);
    return [name === undefined ? DEFAULT_KEY : { namespace: "", name }];
  };

  const catalogRules = CATALOG_KINDS.flatMap((kind) => [
    {
      apiGroups: [kind.group],
      resources: [kind.plural],
      verbs: ["get", "list", "watch", "create", "patch", "delete"],
      reason: `the catalog mirror: each connection's catalog as ${kind.kind} objects`,
      grantedIn: "cluster" as const,
    },
    {
      apiGroups: [kind.group],
      resources: [`${kind.plural}/status`],
      verbs: ["patch"],
      reason: `the catalog mirror: echo a reconcile-now request on a ${kind.kind}`,
      grantedIn: "cluster" as const,
    },
  ]);

  const builder = controller("catalog").for(serviceConnectionCrd);
  const secretNamespace = connections.secretNamespace;
  if (secretNamespace) {
    // Cached for the connections' keys; a changed Secret needs no read of its own (a
    // refused read is retried with backoff).
    builder.watches(SECRETS, () => [], { namespaces: [secretNamespace] });
  }
  return builder
    .alsoReconciles(() => [DEFAULT_KEY])
    .watches(trainingProductCrd, productKeys)
    .watches(nasProductCrd, productKeys)
    .watches(trainingJobCrd, refusedKeys, refused)
    .watches(nasVolumeCrd, refusedKeys, refused)
    .permissions([
      ...catalogRules,
      {
        apiGroups: [serviceConnectionCrd.group],
        resources: [serviceConnectionCrd.plural],
        verbs: ["get", "list", "watch"],
        reason: "the catalog mirror: read the connections whose catalogs it mirrors",
        grantedIn: "cluster",
      },
      ...secretRules(secretNamespace),
      ...[trainingJobCrd, nasVolumeCrd].map((k) => ({
        apiGroups: [k.group],
        resources: [k.plural],
        verbs: ["get", "list", "watch"],
        reason:
          "the catalog mirror: refresh a catalog when an object is refused for a product code it lacks",
      })),
    ])
    .reconcile(reconcile);
}
