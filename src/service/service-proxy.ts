/**
 * The proxy the calls to the service and to the object storage go through. Which proxy
 * a URL takes (HTTPS_PROXY, HTTP_PROXY, NO_PROXY...) is decided outside this layer and
 * passed in as a {@link ProxyResolver}, so that these calls and the Kubernetes side read
 * the environment alike. Through an http(s) proxy the tunnelling is Node's (an
 * `http.Agent` given `proxyEnv`: `CONNECT` for an https:// URL, the absolute form for an
 * http:// one, `user:password@` sent as `Proxy-Authorization`); through a socks5 one,
 * socks-proxy-agent's ({@link socksAgentClass}).
 */
import type { ClientRequest, Agent as HttpAgent } from "node:http";
import type { Duplex } from "node:stream";
import { Agent as AgentBase, type AgentConnectOpts } from "agent-base";
import { isUnreachable, ProxyConnectError } from "../runtime/proxy-errors.js";
import { socksTunnelOpener } from "../runtime/socks-tunnel.js";

/** The proxy a call to `url` goes through (`http://`, `https://` or `socks5://`), or undefined for a direct call. */
export type ProxyResolver = (url: URL) => string | undefined;

/** How a client's agents reach the network (empty: directly). */
export interface ProxyAgentOptions {
  /** An http(s) proxy, as Node's `http.Agent` option. */
  proxyEnv?: { HTTP_PROXY: string; HTTPS_PROXY: string };
  /** A `socks5h://` proxy every connection is tunnelled through ({@link socksAgentClass}). */
  socks?: string;
  /** The proxy as its errors name it ({@link proxyFailure}); set by {@link proxyOptionsFor}. */
  named?: NamedProxy;
}

/** A proxy and the setting it came from (`HTTPS_PROXY`), as {@link ProxyConnectError} names them. */
export interface NamedProxy {
  /** As the resolver answered it, its user and password included: never shown whole. */
  url: string;
  setting: string;
}

/**
 * A proxy these calls cannot use; the message never holds the proxy's URL (it may hold a
 * password). Terminal, condition reason `ProxyUnsupported`: no call is made until the
 * operator's environment changes (a restart), so retrying cannot help.
 */
export class ServiceProxyError extends Error {
  /** The condition reason of every object this error holds. */
  readonly reason = "ProxyUnsupported";
  readonly retryable = false;

  constructor(message: string) {
    super(message);
    this.name = "ServiceProxyError";
  }
}

/** Whether Node `version` (`process.versions.node`) tunnels through the proxy an Agent's `proxyEnv` names (22.21+, 24.5+). */
export function agentProxySupported(version: string): boolean {
  const [major = 0, minor = 0] = version.split(".").map(Number);
  return major > 24 || (major === 24 && minor >= 5) || (major === 22 && minor >= 21);
}

/**
 * The agent options that send every request through `proxy` (none when undefined): a
 * `proxyEnv` naming it alone, since the resolver already applied NO_PROXY, or for a
 * socks5 (or socks5h) proxy its `socks5h://` URL: the proxy resolves the names, as
 * undici's agent of the Kubernetes side has it do for either scheme. Throws
 * {@link ServiceProxyError} for another scheme, and for an http(s) proxy on a Node whose
 * agents cannot tunnel, instead of calling directly.
 */
export function proxyAgentOptions(
  proxy: string | undefined,
  nodeVersion: string = process.versions.node,
): ProxyAgentOptions {
  if (proxy === undefined) return {};
  let scheme: string;
  try {
    scheme = new URL(proxy).protocol.slice(0, -1);
  } catch {
    throw new ServiceProxyError("the proxy's URL does not parse");
  }
  if (scheme === "socks5" || scheme === "socks5h") {
    return { socks: `socks5h${proxy.slice(scheme.length)}` };
  }
  if (scheme !== "http" && scheme !== "https") {
    throw new ServiceProxyError(
      `unsupported proxy scheme "${scheme}" for the service and the object storage: http, https or socks5`,
    );
  }
  if (!agentProxySupported(nodeVersion)) {
    throw new ServiceProxyError(
      `Node ${nodeVersion} cannot call the service or the object storage through a proxy: Node 22.21+ or 24.5+ can`,
    );
  }
  return { proxyEnv: { HTTP_PROXY: proxy, HTTPS_PROXY: proxy } };
}

/**
 * The proxy of `url` as `resolve` answers it, checked as {@link proxyAgentOptions} checks
 * it; errors name `what` (e.g. "the service") and where the proxy was set.
 */
export function proxyOptionsFor(
  what: string,
  url: string,
  resolve: ProxyResolver | undefined,
): ProxyAgentOptions {
  const setting = url.startsWith("https:") ? "HTTPS_PROXY" : "HTTP_PROXY";
  try {
    const proxy = resolve?.(new URL(url));
    const options = proxyAgentOptions(proxy);
    return proxy === undefined ? options : { ...options, named: { url: proxy, setting } };
  } catch (err) {
    throw new ServiceProxyError(`the proxy of ${what} (${setting}): ${(err as Error).message}`);
  }
}

/**
 * `err` as the {@link ProxyConnectError} of `proxy` when a connection to it failed
 * (every connection of a client with a proxy is one to the proxy): refused, its name
 * unknown, or a tunnel it refused or never opened (ERR_PROXY_TUNNEL, an http(s) proxy's
 * or a SOCKS5 one's); its code stays the cause's, so that a call it failed is known as
 * not sent. Any other error, or no proxy: undefined.
 */
export function proxyFailure(
  proxy: NamedProxy | undefined,
  err: unknown,
): ProxyConnectError | undefined {
  if (proxy === undefined || err instanceof ProxyConnectError) return undefined;
  const tunnel = (err as { code?: unknown } | null)?.code === "ERR_PROXY_TUNNEL";
  return tunnel || isUnreachable(err)
    ? new ProxyConnectError(proxy.url, proxy.setting, err)
    : undefined;
}

/**
 * An agent class whose every connection is a SOCKS5 tunnel through `proxy` (a
 * `socks5h://` URL), opened by runtime/socks-tunnel.ts as the API server's are;
 * agent-base keeps Node's pooling (keep-alive, `maxSockets`) over those tunnels. The
 * library's agent only opens tunnels and takes none of these options: its `timeout`
 * would also close a tunnel waiting for an answer. `secure`: its requests are https
 * (TLS inside the tunnel), which agent-base cannot always tell from a request's options
 * (the S3 client's name no protocol), and without which it pools the tunnel under
 * another name than it looks for. A tunnel that is not opened fails with
 * ERR_PROXY_TUNNEL, the code of an http proxy's refusal: nothing was sent.
 */
export function socksAgentClass(proxy: string, secure: boolean): typeof HttpAgent {
  const open = socksTunnelOpener(proxy);
  class SocksTunnelAgent extends AgentBase {
    override isSecureEndpoint(): boolean {
      return secure;
    }

    connect(req: ClientRequest, options: AgentConnectOpts): Promise<Duplex> {
      return open(req, options);
    }
  }
  return SocksTunnelAgent;
}
