/**
 * The error of a connection to a proxy that failed, alike for the API server's
 * connections (kube-connection.ts) and the object storage's (service/object-storage.ts):
 * it says that the proxy is the problem, and which one.
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

/** The status a proxy answered a CONNECT with, from undici's error for it. */
export function tunnelRefusal(err: unknown): string | undefined {
  return /^Proxy response \((\d{3})\)/.exec(String((err as Error | null)?.message))?.[1];
}

/**
 * A connection to a proxy that failed (the API server's, kube-connection.ts; the object
 * storage's): its message names the proxy (scheme, host and port: never its user and
 * password) and where it was set, `the proxy http://10.0.0.5:3128 of HTTPS_PROXY cannot
 * be reached: connect ECONNREFUSED 10.0.0.5:3128`, or what its answer to the CONNECT
 * means (a 5xx: `... cannot reach the server: it answered 503 to CONNECT`); its code is
 * the cause's, so that it is handled as the cause would be.
 */
export class ProxyConnectError extends Error {
  readonly code: unknown;
  constructor(proxy: string, where: string, cause: unknown) {
    const { protocol, host } = new URL(proxy);
    const code = (cause as { code?: unknown } | null)?.code;
    const why = cause instanceof Error ? cause.message : String(cause);
    const proxyOf = `the proxy ${protocol}//${host} of ${where}`;
    const status = tunnelRefusal(cause);
    const refused = status?.startsWith("5") ? "cannot reach the server" : "refused the tunnel";
    super(
      status
        ? `${proxyOf} ${refused}: it answered ${status} to CONNECT`
        : isUnreachable(cause)
          ? `${proxyOf} cannot be reached: ${why}`
          : `the connection to ${proxyOf} failed: ${why}`,
      { cause },
    );
    this.name = "ProxyConnectError";
    this.code = code;
  }
}
