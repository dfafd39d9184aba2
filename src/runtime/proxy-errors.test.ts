/**
 * How the failure of a connection to a proxy reads: which proxy, whose setting and what
 * went wrong, for an http(s) proxy (undici's and Node's errors) and a SOCKS5 one
 * (socks-tunnel.ts's), never with the proxy's user and password; its code stays the
 * cause's.
 */
import { describe, expect, it } from "vitest";
import { ProxyConnectError, tunnelRefusal } from "./proxy-errors.js";

const PROXY = "socks5://aidc:pa%40ss@10.0.0.5:1080";

/** An error as socks-tunnel.ts throws it for a tunnel that was not opened. */
const socksError = (why: string) =>
  Object.assign(new Error(`SOCKS5 proxy: ${why}`), { code: "ERR_PROXY_TUNNEL" });

describe("ProxyConnectError of a SOCKS5 proxy", () => {
  it.each([
    ["connect ECONNREFUSED 10.0.0.5:1080", "cannot be reached: connect ECONNREFUSED 10.0.0.5:1080"],
    ["getaddrinfo ENOTFOUND socks.corp", "cannot be reached: getaddrinfo ENOTFOUND socks.corp"],
    ["Proxy connection timed out", "cannot be reached: Proxy connection timed out"],
    ["Socks5 Authentication failed", "refused the tunnel: Socks5 Authentication failed"],
    [
      "Socks5 proxy rejected connection - NotAllowed",
      "refused the tunnel: Socks5 proxy rejected connection - NotAllowed",
    ],
    [
      "Socks5 proxy rejected connection - HostUnreachable",
      "cannot reach the server: it answered HostUnreachable",
    ],
    ["Socket closed", "closed the tunnel before it was open: Socket closed"],
  ])("says %s as the proxy's, naming the setting", (why, said) => {
    const err = new ProxyConnectError(PROXY, "HTTPS_PROXY", socksError(why));
    expect(err.message).toBe(`the proxy socks5://10.0.0.5:1080 of HTTPS_PROXY ${said}`);
    expect(err.code).toBe("ERR_PROXY_TUNNEL");
  });
});

describe("ProxyConnectError of an http(s) proxy", () => {
  it("reads the status of a CONNECT refused through Node's agent", () => {
    const cause = Object.assign(
      new Error(
        "Failed to establish tunnel to s3.example.test:443 via http://10.0.0.5:3128/: HTTP/1.1 503 Service Unavailable",
      ),
      { code: "ERR_PROXY_TUNNEL" },
    );
    expect(tunnelRefusal(cause)).toBe("503");
    expect(new ProxyConnectError("http://u:p@10.0.0.5:3128", "HTTP_PROXY", cause).message).toBe(
      "the proxy http://10.0.0.5:3128 of HTTP_PROXY cannot reach the server: it answered 503 to CONNECT",
    );
  });

  it("says that a 407 is about its user and password, and in which setting", () => {
    const cause = new Error("Proxy response (407) !== 200 when HTTP Tunneling");
    expect(new ProxyConnectError("http://u:p@10.0.0.5:3128", "HTTPS_PROXY", cause).message).toBe(
      "the proxy http://10.0.0.5:3128 of HTTPS_PROXY refused the tunnel: it answered 407 to CONNECT (its user and password in HTTPS_PROXY are missing or wrong)",
    );
  });

  it("never repeats a user and password a cause's message holds", () => {
    const cause = new Error("tunnel via http://corp:S3cret@10.0.0.5:3128/ ended");
    const err = new ProxyConnectError("http://corp:S3cret@10.0.0.5:3128", "HTTPS_PROXY", cause);
    expect(err.message).toBe(
      "the connection to the proxy http://10.0.0.5:3128 of HTTPS_PROXY failed: tunnel via http://10.0.0.5:3128/ ended",
    );
  });
});
