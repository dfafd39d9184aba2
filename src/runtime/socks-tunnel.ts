/**
 * The tunnels through a SOCKS5 proxy of every connection that takes one: the API
 * server's (kube-socks.ts) and the service's and the object storage's
 * (service/service-proxy.ts). socks-proxy-agent opens them; the proxy resolves the
 * target's name (socks5h) and `user:password@` is sent as RFC 1929 authentication.
 */
import type { ClientRequest } from "node:http";
import { isIP, type Socket } from "node:net";
import { checkServerIdentity } from "node:tls";
import type { AgentConnectOpts } from "agent-base";
import type { SocksProxyAgent } from "socks-proxy-agent";
import { unbracketed } from "./kube-proxy.js";

/** Opens one tunnel to the target `options` names; `req` is only told of the tunnel. */
export type SocksTunnelOpener = (req: ClientRequest, options: AgentConnectOpts) => Promise<Socket>;

/**
 * The opener of tunnels through `proxy` (`socks5://` or `socks5h://`), socks-proxy-agent
 * loaded with the first tunnel, not at start. A tunnel that is not opened fails with
 * `SOCKS5 proxy: <why>` (never the proxy's URL: it may hold a password) and code
 * ERR_PROXY_TUNNEL, an http proxy's refusal's: nothing was sent.
 */
export function socksTunnelOpener(proxy: string): SocksTunnelOpener {
  let loaded: Promise<SocksProxyAgent> | undefined;
  return async (req, options) => {
    try {
      loaded ??= import("socks-proxy-agent").then(({ SocksProxyAgent }) => {
        const agent = new SocksProxyAgent(`socks5h${proxy.slice(proxy.indexOf(":"))}`);
        // It keeps an IPv6 address's brackets ([::1]) and would look them up as a name.
        agent.proxy.host = unbracketed(agent.proxy.host ?? "");
        return agent;
      });
      return await (await loaded).connect(req, identityOfTarget(options));
    } catch (err) {
      const message = `SOCKS5 proxy: ${err instanceof Error ? err.message : String(err)}`;
      throw Object.assign(new Error(message, { cause: err }), { code: "ERR_PROXY_TUNNEL" });
    }
  };
}

/**
 * The options of a tunnel whose TLS (socks-proxy-agent's, for a `secureEndpoint`) checks
 * the certificate against the target's IP address: the library drops `host` and sets no
 * servername for an address, so Node would check it against "localhost" (refusing a
 * certificate for the address, accepting one for localhost).
 */
function identityOfTarget(options: AgentConnectOpts): AgentConnectOpts {
  const host = unbracketed(options.host ?? "");
  if (!options.secureEndpoint || isIP(host) === 0 || options.servername) return options;
  const check = options.checkServerIdentity ?? checkServerIdentity;
  return { ...options, checkServerIdentity: (_name, cert) => check(host, cert) };
}
