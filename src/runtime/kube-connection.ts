import type * as k8s from "@kubernetes/client-node";

/**
 * One connection to the API server per cluster and user, shared by every request.
 *
 * client-node 2.0 sends every request (its typed APIs, `KubernetesObjectApi`, `Watch`,
 * health and logs alike) through `KubeConfig.applySecurityAuthentication`, which builds
 * a new undici dispatcher (an `Agent` holding the CA, client certificate and key) each
 * time through its private `createDispatcher`. A new dispatcher has no connection to
 * reuse, so every request paid a TCP and TLS handshake and left its socket open until
 * the server's idle timeout (upstream: kubernetes-client/javascript#2893 for the older
 * `createAgent` path). {@link shareConnections} replaces `createDispatcher` on one
 * KubeConfig with a cache: the dispatcher is built once per cluster, user and TLS
 * material and then reused. undici negotiates HTTP/2 with the API server (ALPN), so all
 * requests and watches of the process run as streams of one connection, as client-go's.
 *
 * The TLS material (CA, certificate, key) is read from the kubeconfig on every request,
 * as before; when it changes (a rotated client certificate, a new in-cluster CA) the
 * next request gets a new dispatcher and the old one closes once its requests are done.
 * Bearer tokens are headers, set per request, so a rotated token needs no new connection.
 *
 * One connection for everything means a connection that dies silently (no FIN, no RST:
 * a dropped NAT entry, a frozen peer) stalls every request and watch until TCP gives
 * up. The informer's watchdog notices a silent watch first; it then calls
 * {@link dropConnections}, which destroys the dispatcher the watch ran on (failing the
 * requests stuck on it, which are retried) so that the next request connects anew.
 */

/** What client-node hands its dispatcher factory (the `https.AgentOptions` it filled in). */
type AgentOptions = Record<string, unknown>;
type DispatcherFactory = (cluster: k8s.Cluster | null, options: AgentOptions) => unknown;

interface SharedDispatcher {
  options: AgentOptions;
  dispatcher: unknown;
}

interface SharedState {
  /** Cluster and user → the dispatcher handed out. */
  dispatchers: Map<string, SharedDispatcher>;
  /** Increases whenever dispatchers are replaced or dropped (not when the first is built). */
  generation: number;
}

/** The TLS and proxy settings that make two dispatchers different. */
const TLS_FIELDS = ["ca", "cert", "key", "pfx", "passphrase", "rejectUnauthorized", "servername"];

const SHARED = Symbol("aidc.sharedDispatchers");

function sameValue(a: unknown, b: unknown): boolean {
  if (Buffer.isBuffer(a) && Buffer.isBuffer(b)) return a.equals(b);
  if (Array.isArray(a) && Array.isArray(b)) {
    return a.length === b.length && a.every((v, i) => sameValue(v, b[i]));
  }
  return a === b;
}

function sameOptions(a: AgentOptions, b: AgentOptions): boolean {
  return TLS_FIELDS.every((f) => sameValue(a[f], b[f]));
}

type Closable = { close?: () => Promise<void>; destroy?: (err?: Error) => Promise<void> };

/** Closes a dispatcher that is no longer handed out, after its requests finish. */
function retire(dispatcher: unknown): void {
  const d = dispatcher as Closable | undefined;
  if (typeof d?.close === "function") d.close().catch(() => undefined);
}

function stateOf(config: k8s.KubeConfig): SharedState | undefined {
  return (config as unknown as { [SHARED]?: SharedState })[SHARED];
}

/**
 * Makes every request made with `config` (and every client made from it) reuse one
 * dispatcher per cluster, user and TLS material. Idempotent; returns `config`.
 * Throws when client-node no longer has the hook, so that an upgrade that moves it
 * fails loudly instead of silently opening a connection per request again.
 */
export function shareConnections(config: k8s.KubeConfig): k8s.KubeConfig {
  const target = config as unknown as {
    createDispatcher?: DispatcherFactory;
    [SHARED]?: SharedState;
  };
  if (target[SHARED]) return config;
  const create = target.createDispatcher;
  if (typeof create !== "function") {
    throw new Error(
      "@kubernetes/client-node has no KubeConfig.createDispatcher: cannot share one connection to the API server",
    );
  }
  const state: SharedState = { dispatchers: new Map(), generation: 0 };
  target[SHARED] = state;
  target.createDispatcher = function sharedDispatcher(
    this: k8s.KubeConfig,
    cluster: k8s.Cluster | null,
    options: AgentOptions,
  ): unknown {
    const key = JSON.stringify([
      cluster?.name ?? "",
      cluster?.server ?? "",
      cluster?.proxyUrl ?? "",
      this.getCurrentUser()?.name ?? "",
    ]);
    const cached = state.dispatchers.get(key);
    if (cached && sameOptions(cached.options, options)) return cached.dispatcher;
    const dispatcher = create.call(this, cluster, options);
    // `undefined` (plain HTTP without TLS settings) means undici's global dispatcher,
    // which already keeps connections alive.
    state.dispatchers.set(key, { options: { ...options }, dispatcher });
    if (cached) {
      state.generation += 1;
      retire(cached.dispatcher);
    }
    return dispatcher;
  };
  return config;
}

/**
 * Which shared connections `config` hands out right now: a number that changes
 * whenever they are replaced or dropped. Pass it to {@link dropConnections}.
 */
export function connectionGeneration(config: k8s.KubeConfig): number {
  return stateOf(config)?.generation ?? 0;
}

/**
 * Destroys the shared dispatchers of `config` (their stuck requests fail and are
 * retried; the next request connects anew), but only if they are still those of
 * `generation`: several watches that noticed the same dead connection drop it once,
 * not the new one that the first drop made room for. True when it dropped something.
 */
export function dropConnections(config: k8s.KubeConfig, generation: number): boolean {
  const state = stateOf(config);
  if (!state || state.generation !== generation || state.dispatchers.size === 0) return false;
  const all = [...state.dispatchers.values()];
  state.dispatchers.clear();
  state.generation += 1;
  for (const { dispatcher } of all) {
    const d = dispatcher as Closable | undefined;
    if (typeof d?.destroy === "function") {
      d.destroy(new Error("the connection to the API server went silent")).catch(() => undefined);
    }
  }
  return true;
}
