/**
 * What a ServiceConnection gives the objects that use it ({@link ResolvedConnection}):
 * its own service client, built from the operator's `service` settings with the
 * connection's base URL, key and limits, with its own HTTP agents, rate limiter and
 * caches, so one account's load or failures never reach another's calls; and its
 * object storage. {@link ConnectionClients} keeps one client per connection and tells
 * it its API key, so a call does not read the Secret.
 */
import type { Logger } from "pino";
import type { OperatorConfig } from "../../config/schema.js";
import type { ServiceConnection } from "../../crds/serviceconnection.js";
import type { RuntimeMetrics, ServiceRequestInfo } from "../../runtime/metrics.js";
import { operatorUserAgent } from "../../runtime/user-agent.js";
import { ServiceClient, type ServiceClientOptions } from "../../service/client.js";
import type { ObjectStorageSettings } from "../../service/object-storage-types.js";
import type { RateLimit } from "../../service/rate-limiter.js";
import type { ProxyResolver } from "../../service/service-proxy.js";
import type { ConnectionSecrets } from "./secrets.js";
import type { ConnectionIdentities } from "./web-identity.js";

/** One resolved connection. */
export interface ResolvedConnection {
  /** The ServiceConnection's name; undefined for the operator's default connection. */
  name: string | undefined;
  /** The metrics label `connection`: the name, or `DEFAULT_CONNECTION_LABEL` (runtime/metrics.ts). */
  label: string;
  service: ServiceClient;
  objectStorage: ObjectStorageSettings | undefined;
}

/** What a connection's client is built from, beyond the operator's service config. */
export interface ConnectionClientSettings {
  /** The ServiceConnection's name (the metrics label). */
  name: string;
  baseUrl: string;
  /** `spec.limits`; undefined: the operator's `service.rateLimit`. */
  rateLimit: RateLimit | undefined;
  /**
   * Reads the key from the Secret (cache); asked at each attempt while the client has
   * been told no key (the Secret or its key is missing: the call fails saying which).
   */
  apiKey: () => Promise<string>;
}

/**
 * Longest a call of a connection waits for that connection's rate limit before it is
 * bounced (`ServiceThrottledError`, retried with backoff): the controllers' workers are
 * shared by every account, so a saturated account must not hold them.
 */
export const CONNECTION_RATE_LIMIT_MAX_WAIT_MS = 1_000;

/** What a connection's client reports to, logs with and goes through. */
export interface ConnectionClientHooks {
  /** Where its calls are recorded, labelled with the connection. */
  metrics?: RuntimeMetrics;
  /** Every attempt, labelled with the connection (tests watching the calls). */
  onRequest?: (info: ServiceRequestInfo) => void;
  log?: Logger;
  /** The proxy of its base URL (cli/run.ts: the environment's); default none. */
  proxyFor?: ProxyResolver;
  /** Asked before each call is sent (ServiceClientOptions.mayCall); default always true. */
  mayCall?: () => boolean;
}

/**
 * The options every service client of the process shares, from the operator's `service`
 * settings: timeouts, retries, the endpoint table, how results read, the caches and the
 * routine budget. The default client (cli/run.ts) and each connection's add their
 * account (base URL, key, limits), logger and metrics hook; a reconcile calls it
 * through the account's calls for it (`ServiceAccount.withCall`: routine or not, its
 * deadline).
 */
export function sharedServiceClientOptions(
  s: OperatorConfig["service"],
  proxyFor?: ProxyResolver,
): Omit<ServiceClientOptions, "baseUrl" | "apiKey"> {
  return {
    ...(proxyFor ? { proxyFor } : {}),
    timeoutMs: s.timeoutMs,
    maxResponseBytes: s.maxResponseBytes,
    idleSocketTimeoutMs: s.idleSocketTimeoutMs,
    httpClient: s.httpClient,
    userAgent: operatorUserAgent(),
    catalogTtlMs: s.catalogTtlMs,
    recheckMissingMs: s.operationRecheckMs,
    subscriptionResult: s.subscriptionResult,
    createTaskFields: s.createTaskFields,
    retry: s.retry,
    rateLimit: s.rateLimit,
    routineShare: s.routineCallShare,
    endpoints: s.endpoints,
  };
}

/** Builds the client of one connection; see the module comment. */
export function connectionClient(
  config: OperatorConfig,
  settings: ConnectionClientSettings,
  hooks: ConnectionClientHooks = {},
): ServiceClient {
  const s = config.service;
  const onRequest = hooks.onRequest;
  return new ServiceClient({
    ...sharedServiceClientOptions(s, hooks.proxyFor),
    baseUrl: settings.baseUrl,
    apiKey: settings.apiKey,
    rateLimit: settings.rateLimit ?? s.rateLimit,
    rateLimitMaxWaitMs: CONNECTION_RATE_LIMIT_MAX_WAIT_MS,
    ...(hooks.log
      ? { logger: hooks.log.child({ component: "service", connection: settings.name }) }
      : {}),
    ...(hooks.metrics ? { metrics: hooks.metrics.serviceCallMetrics(settings.name) } : {}),
    ...(onRequest ? { onRequest: (e) => onRequest({ ...e, connection: settings.name }) } : {}),
    ...(hooks.mayCall ? { mayCall: hooks.mayCall } : {}),
  });
}

interface BuiltClient {
  uid: string | undefined;
  generation: number | undefined;
  client: ServiceClient;
}

/**
 * The clients of the connections, one per connection: built at its first use, built
 * again when the connection's uid or generation changes (base URL, limits, secretRef).
 * Each is told its API key as the cache has it when it is built and at every change of
 * its Secret ({@link ConnectionClients.tellKey}); when the key cannot be read it is told
 * none, so each attempt asks `apiKey` and fails saying what is missing (never the last
 * key). A client replaced or forgotten asks at each attempt too, for whoever still holds it.
 */
export class ConnectionClients {
  private readonly built = new Map<string, BuiltClient>();

  /**
   * `newClient` builds a client (cli/run.ts: {@link connectionClient}); `connectionNamed`
   * answers a ServiceConnection as cached now, whose Secrets `secrets` reads, or whose
   * web identity `identities` exchanges.
   */
  constructor(
    private readonly newClient: (settings: ConnectionClientSettings) => ServiceClient,
    private readonly secrets: ConnectionSecrets,
    private readonly connectionNamed: (name: string) => ServiceConnection | undefined,
    private readonly identities: ConnectionIdentities,
  ) {}

  /** What `conn` gives its objects: its client, and its object storage if it declares one. */
  resolve(conn: ServiceConnection): ResolvedConnection {
    const name = conn.metadata.name ?? "";
    const storage = conn.spec.objectStorage;
    return {
      name,
      label: name,
      service: this.clientOf(conn),
      objectStorage: storage
        ? {
            endpoint: storage.endpoint,
            ...(storage.region ? { region: storage.region } : {}),
            ...this.credentialsOf(conn),
            exportCredentials: storage.exportCredentials === true,
          }
        : undefined,
    };
  }

  /** Where the S3 credentials of `conn` come from: its web identity, else its Secret. */
  private credentialsOf(
    conn: ServiceConnection,
  ): Pick<ObjectStorageSettings, "credentials" | "source" | "refused"> {
    const name = conn.metadata.name ?? "";
    const identity = this.identities.of(name, conn.spec);
    if (identity) {
      return { credentials: identity.read, source: identity.source, refused: identity.refused };
    }
    const ref = conn.spec.objectStorage?.credentialsSecretRef;
    return {
      credentials: async () => this.s3Credentials(name),
      source: `the Secret ${ref?.namespace}/${ref?.name}`,
    };
  }

  /** The client of `conn`: the one built for it, or a new one told its key. */
  private clientOf(conn: ServiceConnection): ServiceClient {
    const name = conn.metadata.name ?? "";
    const built = this.built.get(name);
    const { uid, generation } = conn.metadata;
    if (built && built.uid === uid && built.generation === generation) return built.client;
    if (built) retire(built.client);
    const client = this.newClient({
      name,
      baseUrl: conn.spec.baseUrl,
      rateLimit: conn.spec.limits,
      apiKey: async () => this.apiKeyOf(name),
    });
    this.built.set(name, { uid, generation, client });
    this.tell(name, client);
    return client;
  }

  /** Tells the client of connection `name`, if built, its key as the cache has it now. */
  tellKey(name: string): void {
    const built = this.built.get(name);
    if (built) this.tell(name, built.client);
  }

  /** Forgets the client of connection `name` and closes its idle sockets. */
  forget(name: string): void {
    const built = this.built.get(name);
    if (built) retire(built.client);
    this.built.delete(name);
    this.identities.forget(name);
  }

  /** Forgets every client and closes its idle sockets. */
  close(): void {
    for (const b of this.built.values()) retire(b.client);
    this.built.clear();
  }

  /** The API key of connection `name`, from its Secret as cached now. */
  private apiKeyOf(name: string): string {
    const conn = this.connectionNamed(name);
    if (!conn) throw new Error(`the ServiceConnection ${name} no longer exists`);
    return this.secrets.apiKey(conn.spec);
  }

  private s3Credentials(name: string) {
    const credentials = this.secrets.s3Credentials(this.connectionNamed(name)?.spec);
    if (!credentials) throw new Error(`the ServiceConnection ${name} declares no object storage`);
    return credentials;
  }

  private tell(name: string, client: ServiceClient): void {
    let key: string | undefined;
    try {
      key = this.apiKeyOf(name);
    } catch {
      // None: each attempt asks, and fails with what is missing.
      key = undefined;
    }
    client.useApiKey(key);
  }
}

/** A client no longer kept: a call still made with it reads the key at each attempt. */
function retire(client: ServiceClient): void {
  client.useApiKey(undefined);
  client.close();
}
