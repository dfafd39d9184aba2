/**
 * The error of a connection to a proxy that failed, alike for the API server's
 * connections (kube-connection.ts) and the service's and the object storage's
 * (service/service-proxy.ts): it says that the proxy is the problem, and which one.
 */

/**
 * The codes of a connection refused or never opened (a host down or unknown, a port
 * closed): nothing was sent on it (service/transport-errors.ts counts a call failed so
 * as not sent).
 */
export const CONNECT_FAILED_CODES = [
  "ECONNREFUSED",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EHOSTUNREACH",
  "ENETUNREACH",
] as const;

/** {@link CONNECT_FAILED_CODES} and the timeouts of a connection being opened. */
const UNREACHABLE_CODES = new Set<string>([
  ...CONNECT_FAILED_CODES,
  "ETIMEDOUT",
  "UND_ERR_CONNECT_TIMEOUT",
]);

/** True for an error of a connection that could not be opened at all (see {@link UNREACHABLE_CODES}). */
export function isUnreachable(err: unknown): boolean {
  return UNREACHABLE_CODES.has(String((err as { code?: unknown } | null)?.code));
}

/**
 * The status a proxy answered a CONNECT with, from undici's error for it or Node's
 * (an agent's `proxyEnv`: `Failed to establish tunnel to … via …: HTTP/1.1 503 …`).
 */
export function tunnelRefusal(err: unknown): string | undefined {
  const message = String((err as Error | null)?.message);
  return (
    /^Proxy response \((\d{3})\)/.exec(message)?.[1] ??
    /Failed to establish tunnel to \S+ via \S+: HTTP\/[\d.]+ (\d{3})\b/.exec(message)?.[1]
  );
}

/** The answers of a SOCKS5 proxy that say it cannot reach the target (RFC 1928 replies 1, 3-6). */
const SOCKS_UNREACHED =
  /rejected connection - (Failure|NetworkUnreachable|HostUnreachable|ConnectionRefused|TTLExpired)$/;

/**
 * What a SOCKS5 tunnel that was not opened says (socks-tunnel.ts: `SOCKS5 proxy: <why>`,
 * code ERR_PROXY_TUNNEL), without its prefix; undefined for another error.
 */
function socksFailure(err: unknown): string | undefined {
  const e = err as { code?: unknown; message?: unknown } | null;
  if (e?.code !== "ERR_PROXY_TUNNEL") return undefined;
  return /^SOCKS5 proxy: (.*)$/s.exec(String(e.message))?.[1];
}

/**
 * How the failure of a tunnel through a SOCKS5 proxy reads after the proxy's name: the
 * proxy not reached (the library keeps only the message of the connection's error:
 * `connect ECONNREFUSED …`, `getaddrinfo ENOTFOUND …`, its own timeout), the target not
 * reached by it or closed before it opened, or a refusal (its user and password, a rule
 * of the proxy).
 */
function socksWording(why: string): string {
  const code = /^(?:connect|getaddrinfo) (\S+)/.exec(why)?.[1];
  if ((code && UNREACHABLE_CODES.has(code)) || why === "Proxy connection timed out") {
    return `cannot be reached: ${why}`;
  }
  const answer = SOCKS_UNREACHED.exec(why)?.[1];
  if (answer) return `cannot reach the server: it answered ${answer}`;
  // `ssh -D` closes the connection when its server cannot open the target's.
  if (why === "Socket closed") return `closed the tunnel before it was open: ${why}`;
  return `refused the tunnel: ${why}`;
}

/**
 * The cause of a {@link ProxyConnectError} for a request a proxy answered 407 itself (an
 * http:// URL is sent to the proxy whole, with no tunnel): nothing went further, so its
 * code is a refused tunnel's.
 */
export function proxyAuthAnswer(): Error {
  return Object.assign(new Error("Proxy answer (407)"), { code: "ERR_PROXY_TUNNEL" });
}

/**
 * A connection to a proxy that failed (the API server's, kube-connection.ts; the object
 * storage's): its message names the proxy (scheme, host and port: never its user and
 * password) and where it was set, `the proxy http://10.0.0.5:3128 of HTTPS_PROXY cannot
 * be reached: connect ECONNREFUSED 10.0.0.5:3128`, or what its answer to the CONNECT
 * means (a 5xx: `... cannot reach the server: it answered 503 to CONNECT`), alike for a
 * SOCKS5 proxy's tunnel (`... refused the tunnel: Socks5 Authentication failed`); its
 * code is the cause's, so that it is handled as the cause would be.
 */
export class ProxyConnectError extends Error {
  readonly code: unknown;
  constructor(proxy: string, where: string, cause: unknown) {
    const { protocol, host } = new URL(proxy);
    const code = (cause as { code?: unknown } | null)?.code;
    // A user:password in a URL of the message (the proxy's) is never repeated.
    const why = (cause instanceof Error ? cause.message : String(cause)).replace(
      /\/\/[^/\s@]*@/g,
      "//",
    );
    const proxyOf = `the proxy ${protocol}//${host} of ${where}`;
    const answered = /^Proxy answer \((\d{3})\)$/.exec(why)?.[1];
    const status = tunnelRefusal(cause) ?? answered;
    const refused = answered
      ? "refused the request"
      : status?.startsWith("5")
        ? "cannot reach the server"
        : "refused the tunnel";
    const to = answered ? "" : " to CONNECT";
    // 407: the proxy wants a user and password (the setting's `user:password@`).
    const auth =
      status === "407" ? ` (its user and password in ${where} are missing or wrong)` : "";
    const socks = socksFailure(cause);
    super(
      status
        ? `${proxyOf} ${refused}: it answered ${status}${to}${auth}`
        : socks !== undefined
          ? `${proxyOf} ${socksWording(socks)}`
          : isUnreachable(cause)
            ? `${proxyOf} cannot be reached: ${why}`
            : `the connection to ${proxyOf} failed: ${why}`,
      { cause },
    );
    this.name = "ProxyConnectError";
    this.code = code;
  }
}
