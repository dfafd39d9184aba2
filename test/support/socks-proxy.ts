import { createServer, type Socket } from "node:net";
import { isLoopback, TunnellingProxy } from "./tunnelling-proxy.js";

/**
 * A loopback SOCKS5 proxy (RFC 1928, `CONNECT` only), as `ssh -D` opens to a bastion:
 * it counts its tunnels and records their targets, so that a test can prove a client
 * went through it. With `credentials` (`user:password`) it asks for RFC 1929
 * username/password authentication and refuses others. `hosts` maps names it resolves
 * itself; a target not on loopback after the mapping is refused.
 */
export class SocksProxy extends TunnellingProxy {
  constructor(
    private readonly hosts: Record<string, string> = {},
    private readonly credentials?: string,
  ) {
    super();
  }

  /** Listens on a free port of loopback `address`; resolves with `socks5://127.0.0.1:<port>` (or `[::1]`). */
  start(address = "127.0.0.1"): Promise<string> {
    return this.listen(
      createServer((client) => {
        this.accept(client);
        void this.serve(client).catch(() => client.destroy());
      }),
      address,
    );
  }

  /** `socks5://127.0.0.1:<port>` (or `[::1]`) */
  get url(): string {
    return `socks5://${this.host}:${this.port}`;
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
    this.tunnel(client, target, port, {
      established: reply(0x00),
      early: () => read.rest(),
      failed: reply(0x05),
    });
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
