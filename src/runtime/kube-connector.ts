/**
 * The connector of a direct connection to the API server (kube-connection.ts): undici's,
 * except that a connect timeout that came after the TCP connection was made, its TLS
 * handshake unanswered, says what it likely means: the server, or a front of it, is at
 * its limit of connections. Such a listener leaves new connections in the kernel's
 * backlog, connected but never served (haproxy's `maxconn`, nginx's
 * `worker_connections`); over HTTP/1.1 every watch holds a connection of its own, and
 * many watched namespaces reach a front's limit. undici's own message, `Connect Timeout
 * Error`, sends the user to the network instead.
 */
import type { Socket } from "node:net";
import type { buildConnector } from "undici";
import build from "undici/lib/core/connect.js";

/** undici's connector returns the socket it opens, which its declaration does not say. */
type SocketConnector = (
  options: buildConnector.Options,
  callback: buildConnector.Callback,
) => Socket | undefined;

/** undici's connector of `options` (its BuildOptions), a TLS handshake unanswered said as such. */
export function directConnector(
  options: buildConnector.BuildOptions & { timeout: number },
): buildConnector.connector {
  const connect = build(options) as unknown as SocketConnector;
  return (o, callback) => {
    let connected = false;
    const socket = connect(o, (...args) => {
      const err = args[0] as (Error & { code?: unknown }) | null;
      if (connected && o.protocol === "https:" && err?.code === "UND_ERR_CONNECT_TIMEOUT") {
        callback(
          new TlsUnansweredError(`${o.hostname}:${o.port || 443}`, options.timeout, err),
          null,
        );
      } else callback(...args);
    });
    socket?.once("connect", () => {
      connected = true;
    });
  };
}

/** A connection taken whose TLS handshake got no answer in time; its code is the connect timeout's. */
export class TlsUnansweredError extends Error {
  readonly code = "UND_ERR_CONNECT_TIMEOUT";
  constructor(where: string, timeoutMs: number, cause: Error) {
    super(
      `${where} took the connection but did not answer its TLS handshake in ${timeoutMs / 1000} s: the API server, or a front of it, is at its limit of connections or stalled (haproxy's maxconn, nginx's worker_connections; over HTTP/1.1 each watch holds a connection)`,
      { cause },
    );
    this.name = "TlsUnansweredError";
  }
}
