/**
 * The connections to the API server through a SOCKS5 proxy (a `proxy-url` or an
 * environment proxy `socks5://` or `socks5h://`: an `ssh -D` tunnel, a dante egress),
 * for the dispatcher of a direct connection (kube-connection.ts), which keeps its
 * HTTP/2, PINGs, GOAWAY handling and timeouts. Each connection is a tunnel of
 * socks-tunnel.ts, with TLS inside it as undici's own connector makes it.
 */
import { EventEmitter } from "node:events";
import type { ClientRequest } from "node:http";
import type { buildConnector } from "undici";
import { ProxyConnectError } from "./proxy-errors.js";
import { socksTunnelOpener } from "./socks-tunnel.js";

/**
 * A connector (undici's `connect` option) that opens each connection as a tunnel
 * through `proxy`, with TCP keepalive after `keepAliveInitialDelay` ms as a direct
 * connection's, then hands it to `secure` for TLS when the server is https://. A tunnel
 * that fails fails the connection with a ProxyConnectError naming the proxy (without its
 * password) and `where` its URL came from.
 */
export function socksConnector(
  proxy: string,
  where: string,
  secure: buildConnector.connector,
  keepAliveInitialDelay: number,
): buildConnector.connector {
  const open = socksTunnelOpener(proxy);
  return (options, callback) => {
    const https = options.protocol === "https:";
    // There is no request: the opener only tells it of the tunnel ('proxy').
    open(new EventEmitter() as ClientRequest, {
      // undici hands an IPv6 server's address without brackets.
      host: options.hostname,
      port: Number(options.port) || (https ? 443 : 80),
      secureEndpoint: false,
    }).then(
      (socket) => {
        socket.setKeepAlive(true, keepAliveInitialDelay);
        if (https) secure({ ...options, httpSocket: socket }, callback);
        else callback(null, socket);
      },
      (err: Error) => callback(new ProxyConnectError(proxy, where, err), null),
    );
  };
}
