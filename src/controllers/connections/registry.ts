/**
 * The service connections of the process: the operator's default one (its config) and
 * one per ServiceConnection, each with its own service client (HTTP agents, rate
 * limit, caches, metrics label `connection`) told its API key from its Secret in the
 * informer cache when built and as the cache sees the Secret change (client.ts), so a
 * rotated Secret is used at the next call, and a deleted one fails it.
 *
 * A controller asks for the connection of the object it reconciles,
 * {@link ServiceConnections.forObject}, and calls that connection's client (the managed
 * loop hands it to the kind through `ManagedKind.connect`); a refused or missing
 * connection fails there, before anything is sent.
 */
import {
  type ServiceConnection,
  type ServiceConnectionSpec,
  serviceConnectionCrd,
} from "../../crds/serviceconnection.js";
import type { CacheReader } from "../../runtime/cache.js";
import { DEFAULT_CONNECTION_LABEL } from "../../runtime/metrics.js";
import type { SecretRedactor } from "../../runtime/redaction.js";
import type { KubeObject, ObjectKey, ResourceDescriptor } from "../../runtime/resource.js";
import type { ServiceClient } from "../../service/client.js";
import { retryableError, terminalError } from "../event-reasons.js";
import { type ConnectionClientSettings, ConnectionClients } from "./client.js";
import {
  type ConnectionChoice,
  type ConnectionUser,
  chooseConnection,
  NAMESPACES,
  type NamespaceFacts,
  namespaceAllowed,
  notAllowedMessage,
  notFoundMessage,
} from "./resolution.js";
import { ConnectionSecrets, type S3Credentials, SECRETS } from "./secrets.js";

export { SECRETS };

/** The object storage of a connection (for the Bucket kind). */
export interface ObjectStorageSettings {
  /** The S3 endpoint URL. */
  endpoint: string;
  region?: string;
  /**
   * Reads the credentials from the connection's Secret as the cache has it now (so a
   * rotated Secret is used at the next call); throws an Error saying what is missing.
   * Both values are registered with the redactor before they are returned.
   */
  credentials(): Promise<S3Credentials>;
  /** Whether a Bucket may write the key pair into its spec.exportTo Secret (default no). */
  exportCredentials?: boolean;
}

/** One resolved connection. */
export interface ResolvedConnection {
  /** The ServiceConnection's name; undefined for the operator's default connection. */
  name: string | undefined;
  /** The metrics label `connection`: the name, or {@link DEFAULT_CONNECTION_LABEL}. */
  label: string;
  /** The connection's own service client. */
  service: ServiceClient;
  /** Its object storage, when the connection declares one. */
  objectStorage: ObjectStorageSettings | undefined;
}

/** Where the controllers find the connection of an object. */
export interface ConnectionSource {
  /** The connection `obj` uses; throws when it is missing or refuses the namespace. */
  forObject(obj: ConnectionUser): ResolvedConnection;
}

/** A source with one connection for every object (tests, and building without a cluster). */
export function singleConnection(
  service: ServiceClient,
  objectStorage?: ObjectStorageSettings,
): ConnectionSource {
  const conn: ResolvedConnection = {
    name: undefined,
    label: DEFAULT_CONNECTION_LABEL,
    service,
    objectStorage,
  };
  return { forObject: () => conn };
}

/** Options of {@link ServiceConnections}. */
export interface ServiceConnectionsOptions {
  /** The operator's default connection (its config), used when an object names none. */
  defaultClient: ServiceClient;
  /** The default connection's object storage, if the operator config has one. */
  defaultObjectStorage?: ObjectStorageSettings;
  /** Builds a connection's client (run.ts: the service config with the connection's settings). */
  newClient: (settings: ConnectionClientSettings) => ServiceClient;
  /** The one namespace whose Secrets the operator reads; undefined: none. */
  secretNamespace?: string | undefined;
  /** Learns every key and credential before it is sent. */
  redactor?: SecretRedactor;
}

/** The connections of the process; see the module comment. */
export class ServiceConnections implements ConnectionSource {
  private cache: CacheReader | undefined;
  private readonly clients: ConnectionClients;
  private readonly defaultConnection: ResolvedConnection;
  private readonly listeners: ((name: string) => void)[] = [];
  private readonly secrets: ConnectionSecrets;

  constructor(private readonly options: ServiceConnectionsOptions) {
    this.secrets = new ConnectionSecrets(
      (namespace, name) => this.tryGet(SECRETS, `${namespace}/${name}`),
      options.secretNamespace,
      options.redactor,
    );
    this.clients = new ConnectionClients(options.newClient, (name) => this.apiKeyOf(name));
    this.defaultConnection = {
      name: undefined,
      label: DEFAULT_CONNECTION_LABEL,
      service: options.defaultClient,
      objectStorage: options.defaultObjectStorage,
    };
  }

  /** The namespace whose Secrets are read, if any. */
  get secretNamespace(): string | undefined {
    return this.options.secretNamespace;
  }

  /** The operator's default connection (its config), which objects naming none use. */
  get default(): ResolvedConnection {
    return this.defaultConnection;
  }

  /** Gives the registry the informer cache (ServiceConnections, Namespaces, Secrets). */
  attach(cache: CacheReader): void {
    this.cache = cache;
  }

  /**
   * The connection `obj` uses (connectionRef, else its namespace's annotation, else the
   * default). Throws a TerminalError `ConnectionNotAllowed` when the connection does not
   * allow the object's namespace, and a RetryableError `ConnectionNotFound` when it
   * does not exist: in both cases nothing may be sent for the object.
   */
  forObject(obj: ConnectionUser): ResolvedConnection {
    const namespace = this.namespaceOf(obj);
    const choice = chooseConnection(obj, namespace);
    if (choice.kind === "default") return this.defaultConnection;
    const conn = this.connectionObject(choice.name);
    if (!conn) {
      throw retryableError("ConnectionNotFound", notFoundMessage(choice), { waiting: true });
    }
    const facts = namespace ?? { name: obj.metadata?.namespace ?? "" };
    if (!namespaceAllowed(conn.spec, facts)) {
      // External: the connection (not the object) may change to allow it.
      throw terminalError("ConnectionNotAllowed", notAllowedMessage(choice, facts.name), {
        external: true,
      });
    }
    return this.resolved(conn);
  }

  /** The name of the connection `obj` asks for (undefined: the default), allowed or not. */
  chosenName(obj: ConnectionUser): string | undefined {
    const choice: ConnectionChoice = chooseConnection(obj, this.namespaceOf(obj));
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
    return conn ? this.resolved(conn) : undefined;
  }

  /**
   * Why the Secrets of `spec` cannot be read (a message), or undefined when the API key
   * and, if declared, the S3 credentials are all there. Never includes a value.
   */
  secretProblem(spec: ServiceConnectionSpec): string | undefined {
    return this.secrets.problemOf(spec);
  }

  /** The resourceVersions of the Secrets `spec` names (a change means a new key). */
  secretVersions(spec: ServiceConnectionSpec): string {
    return this.secrets.versionsOf(spec);
  }

  /**
   * Calls `listener` with a connection's name whenever its spec or its Secrets changed
   * (run.ts reconciles that connection's objects again, their holds lifted).
   */
  onChanged(listener: (name: string) => void): void {
    this.listeners.push(listener);
  }

  /** Reports that connection `name` changed (its controller calls it). */
  changed(name: string): void {
    for (const l of this.listeners) l(name);
  }

  /**
   * A change of `secret` (the ServiceConnection controller's watch of Secrets maps each
   * through it): the clients of the connections naming it are told their key as the
   * cache has it now, before the call that follows; returns those connections' keys.
   */
  readonly secretChanged = (secret: KubeObject, cache: CacheReader): ObjectKey[] => {
    const { namespace, name } = secret.metadata ?? {};
    const naming = cache
      .list<KubeObject>(serviceConnectionCrd)
      .map((c) => c as unknown as ServiceConnection)
      .filter((c) =>
        [c.spec.apiKeySecretRef, c.spec.objectStorage?.credentialsSecretRef].some(
          (r) => r?.namespace === namespace && r?.name === name,
        ),
      )
      .map((c) => c.metadata.name ?? "");
    for (const n of naming) this.clients.tellKey(n);
    return naming.map((n) => ({ namespace: "", name: n }));
  };

  /** Forgets the client of a deleted connection and closes its idle sockets. */
  forget(name: string): void {
    this.clients.forget(name);
  }

  /** Closes every connection's idle sockets. */
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

  private resolved(conn: ServiceConnection): ResolvedConnection {
    const name = conn.metadata.name ?? "";
    const storage = conn.spec.objectStorage;
    return {
      name,
      label: name,
      service: this.clients.clientOf(conn),
      objectStorage: storage
        ? {
            endpoint: storage.endpoint,
            ...(storage.region ? { region: storage.region } : {}),
            credentials: async () => this.s3Credentials(name),
            exportCredentials: storage.exportCredentials === true,
          }
        : undefined,
    };
  }

  /** The API key of connection `name`, from its Secret as cached now. */
  private apiKeyOf(name: string): string {
    const conn = this.connectionObject(name);
    if (!conn) throw new Error(`the ServiceConnection ${name} no longer exists`);
    return this.secrets.apiKey(conn.spec);
  }

  private s3Credentials(name: string): S3Credentials {
    const credentials = this.secrets.s3Credentials(this.connectionObject(name)?.spec);
    if (!credentials) throw new Error(`the ServiceConnection ${name} declares no object storage`);
    return credentials;
  }
}
