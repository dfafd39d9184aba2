import { type AddressInfo, connect, isIP, type Server, type Socket } from "node:net";

/** How a proxy answers its client when a tunnel opens or fails to. */
export interface TunnelAnswers {
  /** Sent once the target accepted the connection. */
  established: string | Uint8Array;
  /** Bytes the client sent early (after its request), forwarded before the piping. */
  early: () => Buffer;
  /** Sent when the target refused the connection. */
  failed: string | Uint8Array;
}

/**
 * What the loopback test proxies share (connect-proxy.ts, socks-proxy.ts): the sockets
 * they hold (closed by {@link stop}), the tunnels they count and the targets they
 * record, so that a test can prove a client went through them, and the tunnel itself.
 */
export abstract class TunnellingProxy {
  protected server?: Server;
  private readonly sockets = new Set<Socket>();
  /** Tunnels opened since the start. */
  tunnels = 0;
  /** Every target asked for, as `host:port`. */
  readonly targets: string[] = [];

  /** The proxy's URL. */
  abstract get url(): string;

  /** The loopback port the proxy listens on (0 before it starts). */
  protected get port(): number {
    return (this.server?.address() as AddressInfo | undefined)?.port ?? 0;
  }

  /** The loopback address the proxy listens on, as a URL's host names it (`[::1]`). */
  protected get host(): string {
    const address = (this.server?.address() as AddressInfo | undefined)?.address ?? "127.0.0.1";
    return isIP(address) === 6 ? `[${address}]` : address;
  }

  /**
   * Listens with `server` on a free port of the loopback `address` (`::1` for a proxy
   * named by an IPv6 address); resolves with the proxy's URL.
   */
  protected async listen(server: Server, address = "127.0.0.1"): Promise<string> {
    this.server = server;
    await new Promise<void>((resolve) => server.listen(0, address, resolve));
    return this.url;
  }

  /** Holds a client's socket until it closes; an error destroys it. */
  protected accept(client: Socket): void {
    this.sockets.add(client);
    client.on("close", () => this.sockets.delete(client));
    client.on("error", () => client.destroy());
  }

  /**
   * Connects `client` to `host:port`: once connected, counts the tunnel, answers the
   * client and pipes both ways; either side closing closes both.
   */
  protected tunnel(client: Socket, host: string, port: number, answers: TunnelAnswers): void {
    const upstream = connect(port, host, () => {
      this.tunnels += 1;
      client.write(answers.established);
      const early = answers.early();
      if (early.length > 0) upstream.write(early);
      client.pipe(upstream);
      upstream.pipe(client);
    });
    this.sockets.add(upstream);
    const close = () => {
      client.destroy();
      upstream.destroy();
      this.sockets.delete(upstream);
    };
    upstream.on("error", () => {
      if (upstream.connecting && !client.destroyed && client.writable) client.end(answers.failed);
      close();
    });
    upstream.on("close", close);
    client.on("close", close);
  }

  /** Closes the proxy and every tunnel. */
  async stop(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    this.sockets.clear();
    const server = this.server;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

/** Whether a proxy may connect to `host`: loopback only, so a test never leaves the machine. */
export function isLoopback(host: string): boolean {
  if (host === "localhost") return true;
  if (isIP(host) === 4) return host.startsWith("127.");
  return host === "::1" || host === "0:0:0:0:0:0:0:1";
}
