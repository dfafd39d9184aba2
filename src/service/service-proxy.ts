/**
 * The proxy the calls to the service and to the object storage go through. Which proxy
 * a URL takes (HTTPS_PROXY, HTTP_PROXY, NO_PROXY...) is decided outside this layer and
 * passed in as a {@link ProxyResolver}, so that these calls and the Kubernetes side read
 * the environment alike; the tunnelling itself is Node's (an `http.Agent` given
 * `proxyEnv`: `CONNECT` for an https:// URL, the absolute form for an http:// one,
 * `user:password@` sent as `Proxy-Authorization`).
 */

/** The proxy a call to `url` goes through (`http://` or `https://`), or undefined for a direct call. */
export type ProxyResolver = (url: URL) => string | undefined;

/** The options of an `http.Agent` that tunnels through a proxy (empty: direct). */
export interface ProxyAgentOptions {
  proxyEnv?: { HTTP_PROXY: string; HTTPS_PROXY: string };
}

/** A proxy these calls cannot use; the message never holds the proxy's URL (it may hold a password). */
export class ServiceProxyError extends Error {
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
 * The Agent options that send every request through `proxy` (none when undefined): a
 * `proxyEnv` naming it alone, since the resolver already applied NO_PROXY. Throws
 * {@link ServiceProxyError} for a proxy scheme Node's agents cannot tunnel through
 * (socks5) and on a Node without that support, instead of calling directly.
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
  if (scheme !== "http" && scheme !== "https") {
    throw new ServiceProxyError(
      `unsupported proxy scheme "${scheme}" for the service and the object storage: http or https (socks5 serves the API server only; name their hosts in NO_PROXY to call them directly)`,
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
  try {
    return proxyAgentOptions(resolve?.(new URL(url)));
  } catch (err) {
    const from = url.startsWith("https:") ? "HTTPS_PROXY" : "HTTP_PROXY";
    throw new ServiceProxyError(`the proxy of ${what} (${from}): ${(err as Error).message}`);
  }
}
