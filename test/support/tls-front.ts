import { execFile } from "node:child_process";
import { mkdtemp, readFile } from "node:fs/promises";
import { type AddressInfo, connect, isIP, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createServer, type Server } from "node:tls";
import { promisify } from "node:util";

/**
 * A loopback TLS front for a plain-HTTP server (the emulator): it serves a certificate
 * of its own for `name` (a DNS name, or an IP address as its only subject) and passes each connection's bytes to `targetPort`, so a client
 * calls `https://<name>:<port>` as it would a remote HTTPS service. `ca` is the
 * certificate a client trusts it with (self-signed).
 */
export class TlsFront {
  private server?: Server;
  private readonly sockets = new Set<Socket>();
  ca: Buffer = Buffer.alloc(0);
  port = 0;

  constructor(
    private readonly name: string,
    private readonly targetPort: number,
  ) {}

  /** Makes its certificate and listens on a free loopback port; resolves with the port. */
  async start(): Promise<number> {
    const dir = await mkdtemp(join(tmpdir(), "tls-front-"));
    const [key, cert] = [join(dir, "key.pem"), join(dir, "cert.pem")];
    await promisify(execFile)("openssl", [
      ...["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1"],
      ...["-keyout", key, "-out", cert, "-subj", `/CN=${this.name}`],
      ...["-addext", `subjectAltName=${isIP(this.name) ? "IP" : "DNS"}:${this.name}`],
    ]);
    const [keyPem, certPem] = await Promise.all([readFile(key), readFile(cert)]);
    this.ca = certPem;
    const server = createServer({ key: keyPem, cert: certPem }, (client) => {
      const upstream = connect(this.targetPort, "127.0.0.1");
      for (const s of [client, upstream]) {
        this.sockets.add(s);
        s.on("close", () => this.sockets.delete(s));
        s.on("error", () => {
          client.destroy();
          upstream.destroy();
        });
      }
      client.pipe(upstream).pipe(client);
    });
    this.server = server;
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    this.port = (server.address() as AddressInfo).port;
    return this.port;
  }

  /** Closes the listener and every connection. */
  async stop(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) =>
      this.server ? this.server.close(() => resolve()) : resolve(),
    );
  }
}
