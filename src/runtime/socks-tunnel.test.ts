/**
 * The one opener of SOCKS5 tunnels, which the API server's connections and the service's
 * and the object storage's calls share: a proxy at an IPv6 address, `socks5://` and
 * `socks5h://` alike (the proxy resolves the name), a refusal never naming the password.
 */
import { EventEmitter } from "node:events";
import type { ClientRequest } from "node:http";
import { createServer, type Server } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { SocksProxy } from "../../test/support/socks-proxy.js";
import { socksTunnelOpener } from "./socks-tunnel.js";

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});

/** A loopback server that answers each connection "hello" and closes it; its port. */
async function helloServer(): Promise<number> {
  const server: Server = createServer((socket) => socket.end("hello"));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  closers.push(() => new Promise((resolve) => server.close(() => resolve())));
  return (server.address() as { port: number }).port;
}

async function socksProxy(address: string): Promise<SocksProxy> {
  const proxy = new SocksProxy({ "hello.test": "127.0.0.1" }, "aidc:p@ss");
  await proxy.start(address);
  closers.push(() => proxy.stop());
  return proxy;
}

const request = () => new EventEmitter() as ClientRequest;

describe("socksTunnelOpener", () => {
  it.each(["socks5", "socks5h"])(
    "tunnels through a %s proxy at an IPv6 address with a user and password, the name resolved by the proxy",
    async (scheme) => {
      const port = await helloServer();
      const proxy = await socksProxy("::1");
      const url = proxy.url.replace("socks5://", `${scheme}://aidc:p%40ss@`);
      expect(url).toMatch(/@\[::1\]:\d+$/);
      const open = socksTunnelOpener(url);
      for (let i = 0; i < 2; i++) {
        const socket = await open(request(), { host: "hello.test", port, secureEndpoint: false });
        const said = await new Promise<string>((resolve) => {
          let text = "";
          socket.on("data", (chunk: Buffer) => {
            text += chunk.toString();
          });
          socket.on("end", () => resolve(text));
        });
        expect(said).toBe("hello");
      }
      expect(proxy.targets).toEqual([`hello.test:${port}`, `hello.test:${port}`]);
    },
  );

  it("fails a refused tunnel as ERR_PROXY_TUNNEL, saying why and never the password", async () => {
    const port = await helloServer();
    const proxy = await socksProxy("127.0.0.1");
    const open = socksTunnelOpener(proxy.url.replace("socks5://", "socks5://aidc:wr0ng-Pa55@"));
    const err = await open(request(), { host: "hello.test", port, secureEndpoint: false }).then(
      () => undefined,
      (e: Error & { code?: string }) => e,
    );
    expect(err?.message).toBe("SOCKS5 proxy: Socks5 Authentication failed");
    expect(err?.code).toBe("ERR_PROXY_TUNNEL");
    expect(proxy.tunnels).toBe(0);
  });
});
