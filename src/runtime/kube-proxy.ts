import { BlockList, isIP } from "node:net";

/**
 * The proxy a request to `server` goes through, or undefined for a direct connection:
 * the kubeconfig cluster's `proxy-url` when it has one, else the environment as Go's
 * `http.ProxyFromEnvironment` (what client-go and kubectl use) reads it:
 * `HTTPS_PROXY` for an https:// server, `HTTP_PROXY` for an http:// one (upper case
 * first, then lower case), minus the hosts `NO_PROXY` names (`*`, a host and its
 * subdomains, `.domain` for subdomains only, an IP address, a CIDR range, each with an
 * optional `:port`). `localhost` and loopback addresses never go through an
 * environment proxy. A proxy without a scheme is taken as `http://`; `socks5h://` is
 * `socks5://` (the proxy resolves names either way); a scheme other than http, https
 * and socks5, and a user or password that is not percent-encoded, are errors.
 */
export function proxyFor(
  server: URL,
  proxyUrl: string | undefined,
  env: NodeJS.ProcessEnv,
): string | undefined {
  if (proxyUrl) return supported(proxyUrl);
  const https = server.protocol === "https:";
  const proxy = https
    ? firstSet(env, "HTTPS_PROXY", "https_proxy")
    : firstSet(env, "HTTP_PROXY", "http_proxy");
  if (!proxy) return undefined;
  const host = unbracketed(server.hostname).toLowerCase();
  const port = server.port || (https ? "443" : "80");
  if (!useProxy(host, port, firstSet(env, "NO_PROXY", "no_proxy") ?? "")) return undefined;
  return supported(/^[a-z][a-z0-9+.-]*:\/\//i.test(proxy) ? proxy : `http://${proxy}`);
}

/**
 * The environment's proxy of a URL ({@link proxyFor} without a `proxy-url`): how the
 * operator's other calls (the service, the object storage) read HTTPS_PROXY, HTTP_PROXY
 * and NO_PROXY, alike with its Kubernetes requests.
 */
export function environmentProxy(env: NodeJS.ProcessEnv): (url: URL) => string | undefined {
  return (url) => proxyFor(url, undefined, env);
}

/**
 * `proxy` with its scheme in lower case, or an error saying what is wrong with it (never
 * the URL: it may hold a password): a scheme other than http, https, socks5 (socks5h),
 * or a user or password the proxy's clients cannot decode, which would fail every
 * request with `URI malformed` (Go refuses it too: `invalid URL escape`).
 */
function supported(proxy: string): string {
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(proxy)?.[1]?.toLowerCase() ?? "";
  if (!["http", "https", "socks5", "socks5h"].includes(scheme)) {
    throw new Error(`unsupported proxy scheme "${scheme}": http, https or socks5`);
  }
  const url = URL.parse(proxy);
  if (!url) throw new Error("the proxy's URL does not parse");
  try {
    decodeURIComponent(url.username);
    decodeURIComponent(url.password);
  } catch {
    throw new Error('the proxy\'s user or password is not percent-encoded: write "%" as "%25"');
  }
  return `${scheme === "socks5h" ? "socks5" : scheme}${proxy.slice(scheme.length)}`;
}

/** `host` without the brackets a URL puts around an IPv6 address (`[::1]`). */
export function unbracketed(host: string): string {
  return host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host;
}

function firstSet(env: NodeJS.ProcessEnv, ...names: string[]): string | undefined {
  for (const n of names) {
    const v = env[n];
    if (v) return v;
  }
  return undefined;
}

/** Go's httpproxy `useProxy`: false for loopback and for what `noProxy` names. */
function useProxy(host: string, port: string, noProxy: string): boolean {
  if (host === "localhost") return false;
  const family = isIP(host);
  if (family !== 0 && isLoopback(host, family)) return false;
  for (const raw of noProxy.split(",")) {
    const entry = raw.trim().toLowerCase();
    if (entry === "") continue;
    if (entry === "*") return false;
    if (entry.includes("/")) {
      if (family !== 0 && inCidr(host, family, entry)) return false;
      continue;
    }
    const { name, entryPort } = splitHostPort(entry);
    if (entryPort && entryPort !== port) continue;
    if (isIP(name) !== 0) {
      if (family !== 0 && sameAddress(host, name)) return false;
      continue;
    }
    if (family !== 0) continue; // a domain entry never matches an address
    const domain = name.replace(/^\*\./, ".");
    if (domain.startsWith(".")) {
      if (host.endsWith(domain)) return false;
    } else if (host === domain || host.endsWith(`.${domain}`)) {
      return false;
    }
  }
  return true;
}

function splitHostPort(entry: string): { name: string; entryPort: string | undefined } {
  const bracketed = /^\[(.+)\](?::(\d+))?$/.exec(entry);
  if (bracketed) return { name: bracketed[1] ?? "", entryPort: bracketed[2] };
  const withPort = /^([^:]+):(\d+)$/.exec(entry);
  if (withPort) return { name: withPort[1] ?? "", entryPort: withPort[2] };
  return { name: entry, entryPort: undefined };
}

function isLoopback(host: string, family: number): boolean {
  const list = new BlockList();
  list.addSubnet("127.0.0.0", 8, "ipv4");
  list.addAddress("::1", "ipv6");
  return list.check(host, family === 4 ? "ipv4" : "ipv6");
}

function sameAddress(a: string, b: string): boolean {
  const fa = isIP(a);
  const fb = isIP(b);
  if (fa !== fb) return false;
  const list = new BlockList();
  list.addAddress(b, fb === 4 ? "ipv4" : "ipv6");
  return list.check(a, fa === 4 ? "ipv4" : "ipv6");
}

function inCidr(host: string, family: number, cidr: string): boolean {
  const [net, bits] = cidr.split("/");
  const netFamily = isIP(net ?? "");
  if (netFamily !== family || bits === undefined) return false;
  const list = new BlockList();
  try {
    list.addSubnet(net ?? "", Number(bits), family === 4 ? "ipv4" : "ipv6");
  } catch {
    return false;
  }
  return list.check(host, family === 4 ? "ipv4" : "ipv6");
}
