/**
 * Which service connection an object uses: its `spec.connectionRef`, else its namespace's
 * annotation {@link CONNECTION_ANNOTATION}, else the operator's default connection, which
 * every namespace may use. A named ServiceConnection must exist and allow the namespace,
 * else nothing is sent; its client is client.ts's. The same choice labels the metrics.
 */
import type { ConnectionWebIdentityOptions } from "../../config/object-storage.js";
import {
  CONNECTION_ANNOTATION,
  type LabelSelector,
  type ServiceConnection,
  type ServiceConnectionSpec,
  serviceConnectionCrd,
} from "../../crds/serviceconnection.js";
import type { CacheReader } from "../../runtime/cache.js";
import { DEFAULT_CONNECTION_LABEL } from "../../runtime/metrics.js";
import type { SecretRedactor } from "../../runtime/outbound-guards.js";
import type { KubeObject, ObjectKey, ResourceDescriptor } from "../../runtime/resource.js";
import type { ServiceClient } from "../../service/client.js";
import type { ObjectStorageSettings } from "../../service/object-storage-types.js";
import type { ProxyResolver } from "../../service/service-proxy.js";
import { retryableError, terminalError } from "../event-reasons.js";
import {
  type ConnectionClientSettings,
  ConnectionClients,
  type ResolvedConnection,
} from "./client.js";
import { ConnectionSecrets, connectionsNaming, SECRETS } from "./secrets.js";
import { ConnectionIdentities } from "./web-identity.js";

/** Core Namespaces (their connection annotation and labels). */
export const NAMESPACES: ResourceDescriptor = {
  group: "",
  version: "v1",
  plural: "namespaces",
  kind: "Namespace",
  namespaced: false,
};

/** Where the controllers find the connection of an object. */
export interface ConnectionSource {
  /** The connection `obj` uses; throws when it is missing or refuses the namespace. */
  forObject(obj: ConnectionUser): ResolvedConnection;
}

/** Which connection an object asks for, and where it was named. */
export type ConnectionChoice =
  | { kind: "default" }
  | { kind: "named"; name: string; source: "connectionRef" | "namespace annotation" };

export interface NamespaceFacts {
  name: string;
  labels?: Record<string, string> | undefined;
  annotations?: Record<string, string> | undefined;
}

/** What the choice reads of an object: its namespace and `spec.connectionRef`. */
export interface ConnectionUser {
  readonly metadata?: { readonly namespace?: string };
  readonly spec?: unknown;
}

/** The connection `obj` asks for: its connectionRef, else its namespace's annotation, else the default. */
export function chooseConnection(
  obj: ConnectionUser,
  namespace: NamespaceFacts | undefined,
): ConnectionChoice {
  const spec = (obj as { spec?: { connectionRef?: { name?: unknown } } }).spec;
  const ref = spec?.connectionRef?.name;
  if (typeof ref === "string" && ref.length > 0) {
    return { kind: "named", name: ref, source: "connectionRef" };
  }
  const annotated = namespace?.annotations?.[CONNECTION_ANNOTATION]?.trim();
  if (annotated) return { kind: "named", name: annotated, source: "namespace annotation" };
  return { kind: "default" };
}

/** True when `labels` satisfy `selector` (metav1.LabelSelector; empty: all). */
export function selectorMatches(
  selector: LabelSelector,
  labels: Record<string, string> | undefined,
): boolean {
  const have = labels ?? {};
  for (const [k, v] of Object.entries(selector.matchLabels ?? {})) if (have[k] !== v) return false;
  for (const e of selector.matchExpressions ?? []) {
    const value = have[e.key];
    const values = e.values ?? [];
    const ok =
      e.operator === "In"
        ? value !== undefined && values.includes(value)
        : e.operator === "NotIn"
          ? value === undefined || !values.includes(value)
          : e.operator === "Exists"
            ? value !== undefined
            : value === undefined;
    if (!ok) return false;
  }
  return true;
}

/** Whether `allowedNamespaces` lists `namespace` (or `*`) or selects it; nothing listed: none. */
export function namespaceAllowed(
  spec: Pick<ServiceConnectionSpec, "allowedNamespaces">,
  namespace: NamespaceFacts,
): boolean {
  const allowed = spec.allowedNamespaces;
  if (!allowed) return false;
  const names = allowed.names ?? [];
  if (names.includes("*") || names.includes(namespace.name)) return true;
  return allowed.selector !== undefined && selectorMatches(allowed.selector, namespace.labels);
}

export interface ServiceConnectionsOptions {
  /** The operator's default connection (its config), used when an object names none. */
  defaultClient: ServiceClient;
  defaultObjectStorage?: ObjectStorageSettings;
  /** Builds a connection's client (cli/run.ts). */
  newClient: (settings: ConnectionClientSettings) => ServiceClient;
  /** The one namespace whose Secrets the operator reads; undefined: none. */
  secretNamespace?: string | undefined;
  /** Learns every key and credential before it is sent, so no log or error shows it. */
  redactor?: SecretRedactor;
  /** The proxy of a URL of the service or the object storage; default none. */
  proxyFor?: ProxyResolver;
  /** Asked before each call to the object storage is sent. */
  mayCall?: () => boolean;
  /** The operator's projected token, for connections with a web identity; default none. */
  webIdentity?: ConnectionWebIdentityOptions;
}

/** The connections of the process (the default and each ServiceConnection's), chosen per object. */
export class ServiceConnections implements ConnectionSource {
  readonly secrets: ConnectionSecrets;
  /** The web identity credentials of the connections that declare one. */
  readonly identities: ConnectionIdentities;
  /** Whether a call to the object storage may be sent now. */
  readonly mayCall: (() => boolean) | undefined;
  private cache: CacheReader | undefined;
  private readonly clients: ConnectionClients;
  private readonly defaultConnection: ResolvedConnection;
  private readonly listeners: ((name: string) => void)[] = [];

  constructor(private readonly options: ServiceConnectionsOptions) {
    this.mayCall = options.mayCall;
    this.secrets = new ConnectionSecrets(
      (namespace, name) => this.tryGet(SECRETS, `${namespace}/${name}`),
      options.secretNamespace,
      options.redactor,
    );
    this.identities = new ConnectionIdentities(options);
    this.clients = new ConnectionClients(
      options.newClient,
      this.secrets,
      (name) => this.connectionObject(name),
      this.identities,
    );
    this.defaultConnection = {
      name: undefined,
      label: DEFAULT_CONNECTION_LABEL,
      service: options.defaultClient,
      objectStorage: options.defaultObjectStorage,
    };
  }

  /** The proxy the object storage's calls take. */
  get proxyFor(): ProxyResolver | undefined {
    return this.options.proxyFor;
  }

  get secretNamespace(): string | undefined {
    return this.options.secretNamespace;
  }

  get default(): ResolvedConnection {
    return this.defaultConnection;
  }

  /** Gives the registry the informer cache (ServiceConnections, Namespaces, Secrets). */
  attach(cache: CacheReader): void {
    this.cache = cache;
  }

  /**
   * The connection `obj` uses; throws `ConnectionNotFound` (retryable) when it does not
   * exist, `ConnectionNotAllowed` (terminal, external: it may change) when it refuses.
   */
  forObject(obj: ConnectionUser): ResolvedConnection {
    const namespace = this.namespaceOf(obj);
    const choice = chooseConnection(obj, namespace);
    if (choice.kind === "default") return this.defaultConnection;
    const named = `the ServiceConnection ${choice.name} (named by the ${choice.source})`;
    const conn = this.connectionObject(choice.name);
    if (!conn) {
      const message = `${named} does not exist; nothing is sent to the service until it does`;
      throw retryableError("ConnectionNotFound", message, { waiting: true });
    }
    const facts = namespace ?? { name: obj.metadata?.namespace ?? "" };
    if (!namespaceAllowed(conn.spec, facts)) {
      const message = `${named} does not allow namespace ${facts.name} in spec.allowedNamespaces; nothing is sent to the service. Name a connection this namespace may use, or have the connection allow it`;
      throw terminalError("ConnectionNotAllowed", message, { external: true });
    }
    return this.clients.resolve(conn);
  }

  /** The name of the connection `obj` asks for (undefined: the default), allowed or not. */
  chosenName(obj: ConnectionUser): string | undefined {
    const choice = chooseConnection(obj, this.namespaceOf(obj));
    return choice.kind === "named" ? choice.name : undefined;
  }

  /** The key of the ServiceConnection `obj` asks for, none for the default (a watch's map). */
  readonly usedKeys = (obj: ConnectionUser): ObjectKey[] => {
    const name = this.chosenName(obj);
    return name ? [{ namespace: "", name }] : [];
  };

  /** The connection named `name` as it is now (for its own controller); undefined when absent. */
  byName(name: string): ResolvedConnection | undefined {
    const conn = this.connectionObject(name);
    return conn ? this.clients.resolve(conn) : undefined;
  }

  /** Calls `listener` with a connection's name whenever its spec or its Secrets changed. */
  onChanged(listener: (name: string) => void): void {
    this.listeners.push(listener);
  }

  /** Reports that connection `name` changed (its controller calls it). */
  changed(name: string): void {
    for (const l of this.listeners) l(name);
  }

  /**
   * A change of `secret` (the ServiceConnection controller's Secret watch maps each
   * through it): the clients of the connections naming it are told their key as cached
   * now, before the call that follows; returns those connections' keys.
   */
  readonly secretChanged = (secret: KubeObject, cache: CacheReader): ObjectKey[] => {
    const all = cache.list<KubeObject>(serviceConnectionCrd) as unknown as ServiceConnection[];
    const naming = connectionsNaming(secret, all);
    for (const n of naming) this.clients.tellKey(n);
    return naming.map((n) => ({ namespace: "", name: n }));
  };

  /** Forgets the client of a deleted connection, its idle sockets closed. */
  forget(name: string): void {
    this.clients.forget(name);
  }

  close(): void {
    this.clients.close();
  }

  private namespaceOf(obj: ConnectionUser): NamespaceFacts | undefined {
    const name = obj.metadata?.namespace;
    if (!name) return undefined;
    const ns = this.tryGet(NAMESPACES, name);
    return { name, labels: ns?.metadata?.labels, annotations: ns?.metadata?.annotations };
  }

  /** The ServiceConnection `name` as cached, or undefined. */
  connectionObject(name: string): ServiceConnection | undefined {
    return this.tryGet(serviceConnectionCrd, name) as ServiceConnection | undefined;
  }

  /** A cached object, or undefined when absent or when the kind is not cached here. */
  private tryGet(res: ResourceDescriptor, key: string): KubeObject | undefined {
    try {
      return this.cache?.get(res, key);
    } catch {
      return undefined;
    }
  }
}

/** The label of objects that name a ServiceConnection that does not exist. */
export const MISSING_CONNECTION_LABEL = "_missing";

/**
 * The metrics label: a ServiceConnection's own name; another object's connection when it
 * exists, else {@link MISSING_CONNECTION_LABEL} (no more values than there are
 * connections, whatever users write); no object: the default connection's.
 */
export function connectionMetricLabel(connections: {
  chosenName(obj: KubeObject): string | undefined;
  connectionObject(name: string): object | undefined;
}): (obj: KubeObject | undefined) => string {
  return (obj) => {
    if (obj === undefined) return DEFAULT_CONNECTION_LABEL;
    if (obj.kind === serviceConnectionCrd.kind)
      return obj.metadata?.name ?? MISSING_CONNECTION_LABEL;
    const name = connections.chosenName(obj);
    if (name === undefined) return DEFAULT_CONNECTION_LABEL;
    return connections.connectionObject(name) ? name : MISSING_CONNECTION_LABEL;
  };
}
