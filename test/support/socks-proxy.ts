import { type AddressInfo, connect, createServer, isIP, type Server, type Socket } from "node:net";

/**
 * A loopback SOCKS5 proxy (RFC 1928, `CONNECT` only), as `ssh -D` opens to a bastion:
 * it counts its tunnels and records their targets, so that a test can prove a client
 * went through it. With `credentials` (`user:password`) it asks for RFC 1929
 * username/password authentication and refuses others. `hosts` maps names it resolves
 * itself; a target not on loopback after the mapping is refused.
 */
export class SocksProxy {
  private server?: Server;
  private readonly sockets = new Set<Socket>();
  /** Tunnels opened since the start. */
  tunnels = 0;
  /** Every target asked for, as `host:port` (a name as the client sent it). */
  readonly targets: string[] = [];

  constructor(
    private readonly hosts: Record<string, string> = {},
    private readonly credentials?: string,
  ) {}

  /** Listens on a free loopback port; resolves with `socks5://127.0.0.1:<port>`. */
  async start(): Promise<string> {
    const server = createServer((client) => {
      this.sockets.add(client);
      client.on("close", () => this.sockets.delete(client));
      client.on("error", () => client.destroy());
      void this.serve(client).catch(() => client.destroy());
    });
    this.server = server;
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    return this.url;
  }

  /** `socks5://127.0.0.1:<port>` */
  get url(): string {
    const addr = this.server?.address() as AddressInfo | undefined;
    return `socks5://127.0.0.1:${addr?.port ?? 0}`;
  }

  /** Closes the proxy and every tunnel. */
  async stop(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    this.sockets.clear();
    const server = this.server;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private async serve(client: Socket): Promise<void> {
    const read = reader(client);
    // Greeting: version, methods.
    const [version, count] = await read(2);
    if (version !== 5) throw new Error("not SOCKS5");
    const methods = await read(count ?? 0);
    const wanted = this.credentials ? 0x02 : 0x00;
    if (!methods.includes(wanted)) {
      client.end(Buffer.from([5, 0xff]));
      return;
    }
    client.write(Buffer.from([5, wanted]));
    if (this.credentials) {
      const [, ulen] = await read(2);
      const user = (await read(ulen ?? 0)).toString();
      const [plen] = await read(1);
      const pass = (await read(plen ?? 0)).toString();
      if (`${user}:${pass}` !== this.credentials) {
        client.end(Buffer.from([1, 1]));
        return;
      }
      client.write(Buffer.from([1, 0]));
    }
    // Request: version, command, reserved, address type, address, port.
    const [, command, , type] = await read(4);
    let host: string;
    if (type === 0x01) host = [...(await read(4))].join(".");
    else if (type === 0x03) host = (await read((await read(1))[0] ?? 0)).toString();
    else if (type === 0x04) {
      const b = await read(16);
      host = Array.from({ length: 8 }, (_, i) => b.readUInt16BE(i * 2).toString(16)).join(":");
    } else throw new Error("unknown address type");
    const port = (await read(2)).readUInt16BE(0);
    this.targets.push(`${host}:${port}`);
    const target = this.hosts[host] ?? host;
    const reply = (code: number) => Buffer.from([5, code, 0, 1, 0, 0, 0, 0, 0, 0]);
    if (command !== 0x01 || !isLoopback(target)) {
      client.end(reply(0x02));
      return;
    }
    const upstream = connect(port, target, () => {
      this.tunnels += 1;
      client.write(reply(0x00));
      const rest = read.rest();
      if (rest.length > 0) upstream.write(rest);
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
      if (upstream.connecting && client.writable) client.end(reply(0x05));
      close();
    });
    upstream.on("close", close);
    client.on("close", close);
  }
}

/** Reads exact byte counts from `socket` until {@link rest} hands the remainder over. */
function reader(socket: Socket) {
  let buffered = Buffer.alloc(0);
  let waiting: { n: number; resolve: (b: Buffer) => void } | undefined;
  const onData = (chunk: Buffer) => {
    buffered = Buffer.concat([buffered, chunk]);
    drain();
  };
  const drain = () => {
    if (waiting && buffered.length >= waiting.n) {
      const { n, resolve } = waiting;
      waiting = undefined;
      const out = buffered.subarray(0, n);
      buffered = buffered.subarray(n);
      resolve(out);
    }
  };
  socket.on("data", onData);
  const read = (n: number) =>
    new Promise<Buffer>((resolve) => {
      waiting = { n, resolve };
      drain();
    });
  read.rest = () => {
    socket.off("data", onData);
    return buffered;
  };
  return read;
}

function isLoopback(host: string): boolean {
  if (host === "localhost") return true;
  if (isIP(host) === 4) return host.startsWith("127.");
  return host === "::1" || host === "0:0:0:0:0:0:0:1";
}
