/**
 * The connections to the API server through a SOCKS5 proxy (a `proxy-url` or an
 * environment proxy `socks5://` or `socks5h://`: an `ssh -D` tunnel, a dante egress),
 * for the dispatcher of a direct connection (kube-connection.ts), which keeps its
 * HTTP/2, PINGs, GOAWAY handling and timeouts. Each connection is a tunnel opened by
 * socks-proxy-agent (the proxy resolves the server's name; `user:password@` is sent as
 * RFC 1929 authentication), with TLS inside it as undici's own connector makes it.
 */
import { EventEmitter } from "node:events";
import type { ClientRequest } from "node:http";
import type { SocksProxyAgent } from "socks-proxy-agent";
import type { buildConnector } from "undici";
import { unbracketed } from "./kube-proxy.js";

/**
 * A connector (undici's `connect` option) that opens each connection as a tunnel
 * through `proxy`, with TCP keepalive after `keepAliveInitialDelay` ms as a direct
 * connection's, then hands it to `secure` for TLS when the server is https://. A tunnel
 * that fails fails the connection with `SOCKS5 proxy: <why>` (never the proxy's URL: it
 * may hold a password).
 */
export function socksConnector(
  proxy: string,
  secure: buildConnector.connector,
  keepAliveInitialDelay: number,
): buildConnector.connector {
  // Loaded with the first connection, not at start.
  let opener: Promise<SocksProxyAgent> | undefined;
  return (options, callback) => {
    opener ??= import("socks-proxy-agent").then(({ SocksProxyAgent }) => {
      const agent = new SocksProxyAgent(`socks5h${proxy.slice(proxy.indexOf(":"))}`);
      // It keeps an IPv6 address's brackets ([::1]) and would look them up as a name.
      agent.proxy.host = unbracketed(agent.proxy.host ?? "");
      return agent;
    });
    const https = options.protocol === "https:";
    const tunnel = opener.then((agent) =>
      // It takes the request only to tell it of the tunnel ('proxy').
      agent.connect(new EventEmitter() as ClientRequest, {
        // undici hands an IPv6 server's address without brackets.
        host: options.hostname,
        port: Number(options.port) || (https ? 443 : 80),
        secureEndpoint: false,
      }),
    );
    tunnel.then(
      (socket) => {
        socket.setKeepAlive(true, keepAliveInitialDelay);
        if (https) secure({ ...options, httpSocket: socket }, callback);
        else callback(null, socket);
      },
      (err: unknown) => {
        const why = err instanceof Error ? err.message : String(err);
        callback(new Error(`SOCKS5 proxy: ${why}`, { cause: err }), null);
      },
    );
  };
}
