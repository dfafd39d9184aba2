import { mkdtemp, readFile } from "node:fs/promises";
import { createServer, type IncomingMessage, request, type ServerResponse } from "node:http";
import { createServer as createTlsServer } from "node:https";
import type { Socket } from "node:net";
import { join } from "node:path";
import { generateCerts } from "../../src/controlplane/certs.js";
import { isLoopback, TunnellingProxy } from "./tunnelling-proxy.js";

/**
 * A loopback HTTP proxy that only tunnels (`CONNECT host:port`, as clients reach an
 * https:// server through a proxy) and counts its tunnels, so that a test can prove a
 * client went through it. `hosts` maps names the proxy resolves itself (e.g. a name no
 * DNS knows, that only the proxy can reach); a target that is not on loopback after the
 * mapping is refused. With `credentials` (`user:password`), a `CONNECT` without that
 * Basic `Proxy-Authorization` is answered 407. With `tls` it is an https:// proxy. With
 * `forwardPlain`, a request in absolute form (`GET http://host:port/path`, as clients send
 * an http:// URL through a proxy) is forwarded too, under the same rules, and its
 * `host:port` recorded in `targets`; else it is answered 405.
 */
export class ConnectProxy extends TunnellingProxy {
  /** `CONNECT`s refused 407 for their missing or wrong credentials. */
  refused = 0;

  constructor(
    private readonly hosts: Record<string, string> = {},
    private readonly credentials?: string,
    private readonly tls?: { key: Buffer; cert: Buffer },
    private readonly forwardPlain = false,
  ) {
    super();
  }

  /** Listens on a free loopback port; resolves with the proxy's URL (`http://127.0.0.1:<port>`). */
  start(): Promise<string> {
    const plain = (req: IncomingMessage, res: ServerResponse) => {
      if (!this.forwardPlain || !/^http:\/\//i.test(req.url ?? "")) {
        res.writeHead(405, { "content-type": "text/plain" }).end("CONNECT only\n");
        return;
      }
      this.forward(req, res);
    };
    const server = this.tls ? createTlsServer(this.tls, plain) : createServer(plain);
    server.on("connect", (req, client: Socket, head: Buffer) => {
      this.accept(client);
      const target = req.url ?? "";
      this.targets.push(target);
      const wanted =
        this.credentials && `Basic ${Buffer.from(this.credentials).toString("base64")}`;
      if (wanted && req.headers["proxy-authorization"] !== wanted) {
        this.refused += 1;
        client.end(
          'HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm="test"\r\n\r\n',
        );
        return;
      }
      const at = target.lastIndexOf(":");
      const name = target.slice(0, at).replace(/^\[|\]$/g, "");
      const port = Number(target.slice(at + 1));
      const host = this.hosts[name] ?? name;
      if (!isLoopback(host) || !Number.isInteger(port) || port <= 0) {
        client.end("HTTP/1.1 403 Forbidden\r\n\r\n");
        return;
      }
      this.tunnel(client, host, port, {
        established: "HTTP/1.1 200 Connection Established\r\n\r\n",
        early: () => head,
        failed: "HTTP/1.1 502 Bad Gateway\r\n\r\n",
      });
    });
    return this.listen(server);
  }

  /** Forwards one absolute-form request to its (mapped, loopback) target. */
  private forward(req: IncomingMessage, res: ServerResponse): void {
    const url = new URL(req.url ?? "");
    this.targets.push(url.host);
    const { "proxy-authorization": auth, ...headers } = req.headers;
    const wanted = this.credentials && `Basic ${Buffer.from(this.credentials).toString("base64")}`;
    if (wanted && auth !== wanted) {
      this.refused += 1;
      res.writeHead(407, { "proxy-authenticate": 'Basic realm="test"' }).end();
      return;
    }
    const host = this.hosts[url.hostname] ?? url.hostname;
    if (!isLoopback(host)) {
      res.writeHead(403).end();
      return;
    }
    const path = `${url.pathname}${url.search}`;
    const upstream = request(
      { host, port: url.port || 80, method: req.method, path, headers },
      (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      },
    );
    upstream.on("error", () => (res.headersSent ? res.destroy() : res.writeHead(502).end()));
    req.pipe(upstream);
  }

  /** `http://127.0.0.1:<port>` (`https://` with `tls`) */
  get url(): string {
    return `${this.tls ? "https" : "http"}://127.0.0.1:${this.port}`;
  }

  /** Starts counting tunnels and targets from zero. */
  reset(): void {
    this.tunnels = 0;
    this.refused = 0;
    this.targets.length = 0;
  }
}

/**
 * A started https:// {@link ConnectProxy} with a certificate of its own (made under
 * `dir`), and the CA a client trusts it with.
 */
export async function startHttpsConnectProxy(
  dir: string,
): Promise<{ proxy: ConnectProxy; ca: Buffer }> {
  const certs = await generateCerts(await mkdtemp(join(dir, "https-proxy-")));
  const [key, cert, ca] = await Promise.all([
    readFile(certs.serverKey),
    readFile(certs.serverCert),
    readFile(certs.caCert),
  ]);
  const proxy = new ConnectProxy({}, undefined, { key, cert });
  await proxy.start();
  return { proxy, ca };
}
