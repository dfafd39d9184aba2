import type { AddressInfo } from "node:net";
import { connect, createServer, type Server, type Socket } from "node:net";

/**
 * A loopback TCP proxy that a test can cut: `block()` drops every connection and
 * refuses new ones until `unblock()`. Used to keep a client away from an API server
 * for a controlled time (TLS passes through untouched), and to count the connections
 * a client opens.
 */
export class TcpProxy {
  private server?: Server;
  private readonly sockets = new Set<Socket>();
  private readonly pairs = new Set<[Socket, Socket]>();
  private blocked = false;
  private partitioned = false;
  /** Connections accepted since the start (or the last {@link resetCount}). */
  accepted = 0;
  /** Connections open right now. */
  open = 0;
  /**
   * The most connections it serves at once: past them a new one is taken and never
   * answered, as a listener at its limit leaves it in the kernel's backlog (haproxy's
   * `maxconn`, nginx's `worker_connections`).
   */
  maxOpen = Number.POSITIVE_INFINITY;

  /** `listenHost`: the loopback address it listens on (`::1` for an IPv6 server URL). */
  constructor(
    private readonly targetPort: number,
    private readonly listenHost = "127.0.0.1",
  ) {}

  /**
   * Listens on `port` of its loopback address, a free one by default (again on the
   * port it had after {@link stop}: a proxy restarted); resolves with it.
   */
  async start(port = 0): Promise<number> {
    const server = createServer((client) => {
      if (this.blocked) {
        client.destroy();
        return;
      }
      if (this.partitioned || this.open >= this.maxOpen) {
        // Taken and never answered, as a peer behind a partition (its SYN unanswered).
        this.sockets.add(client);
        client.pause();
        return;
      }
      const upstream = connect(this.targetPort, "127.0.0.1");
      this.sockets.add(client);
      this.sockets.add(upstream);
      this.accepted += 1;
      this.open += 1;
      const pair: [Socket, Socket] = [client, upstream];
      this.pairs.add(pair);
      let closed = false;
      const close = () => {
        if (!closed) this.open -= 1;
        closed = true;
        this.pairs.delete(pair);
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
    this.blocked = false;
    await new Promise<void>((resolve) => server.listen(port, this.listenHost, resolve));
    return (server.address() as AddressInfo).port;
  }

  /** Drops all connections and refuses new ones. */
  block(): void {
    this.blocked = true;
    for (const s of this.sockets) s.destroy();
    this.sockets.clear();
  }

  /**
   * Makes every open connection silent without closing it (a frozen peer, a lost NAT
   * entry: no FIN, no RST, nothing more delivered either way). New connections work.
   */
  freeze(): void {
    for (const [client, upstream] of this.pairs) {
      client.unpipe(upstream);
      upstream.unpipe(client);
      client.pause();
      upstream.pause();
    }
    this.pairs.clear();
  }

  /**
   * A network partition: open connections go silent ({@link freeze}) and new ones are
   * taken but never answered, until {@link stop}.
   */
  partition(): void {
    this.partitioned = true;
    this.freeze();
  }

  /** Starts counting accepted connections from zero. */
  resetCount(): void {
    this.accepted = 0;
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
