import type { AddressInfo } from "node:net";
import { connect, createServer, type Server, type Socket } from "node:net";

/**
 * A loopback TCP proxy that a test can cut: `block()` drops every connection and
 * refuses new ones until `unblock()`. Used to keep a client away from an API server
 * for a controlled time (TLS passes through untouched).
 */
export class TcpProxy {
  private server?: Server;
  private readonly sockets = new Set<Socket>();
  private blocked = false;

  constructor(private readonly targetPort: number) {}

  /** Listens on a free loopback port; resolves with it. */
  async start(): Promise<number> {
    const server = createServer((client) => {
      if (this.blocked) {
        client.destroy();
        return;
      }
      const upstream = connect(this.targetPort, "127.0.0.1");
      this.sockets.add(client);
      this.sockets.add(upstream);
      const close = () => {
        client.destroy();
        upstream.destroy();
        this.sockets.delete(client);
        this.sockets.delete(upstream);
      };
      for (const s of [client, upstream]) {
        s.on("error", close);
        s.on("close", close);
      }
      client.pipe(upstream);
      upstream.pipe(client);
    });
    this.server = server;
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    return (server.address() as AddressInfo).port;
  }

  /** Drops all connections and refuses new ones. */
  block(): void {
    this.blocked = true;
    for (const s of this.sockets) s.destroy();
    this.sockets.clear();
  }

  /** Accepts connections again. */
  unblock(): void {
    this.blocked = false;
  }

  /** Closes the proxy. */
  async stop(): Promise<void> {
    this.block();
    const server = this.server;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
