/**
 * A loopback HTTP proxy of absolute-form requests, as HTTP_PROXY names one, that records
 * each STS exchange it passes (to {@link STS_HOST}, a name only it resolves: everything
 * goes to loopback): the token and role sent, the credentials answered.
 */
import { createServer, type IncomingMessage, request, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** Only the proxy knows this name (it sends everything to loopback). */
export const STS_HOST = "sts.aidc.test";
/** One exchange the proxy passed: when, the token and role sent, the secrets answered. */
export interface Exchange {
  at: number;
  token: string;
  roleArn: string;
  answered: string[];
}

/** A loopback proxy of absolute-form requests that records each STS exchange. */
export class RecordingProxy {
  readonly exchanges: Exchange[] = [];
  private readonly server = createServer((req, res) => this.forward(req, res));
  url = "";

  async start(): Promise<void> {
    await new Promise<void>((resolve) => this.server.listen(0, "127.0.0.1", resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  stop(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private forward(req: IncomingMessage, res: ServerResponse): void {
    const url = new URL(req.url ?? "");
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks);
      const sts = url.hostname === STS_HOST;
      const { "proxy-connection": _, ...headers } = req.headers;
      const upstream = request(
        {
          host: "127.0.0.1",
          port: url.port,
          method: req.method,
          path: url.pathname + url.search,
          headers,
        },
        (up) => {
          const answer: Buffer[] = [];
          up.on("data", (c: Buffer) => answer.push(c));
          up.on("end", () => {
            const text = Buffer.concat(answer);
            if (sts) this.record(body, String(text));
            res.writeHead(up.statusCode ?? 502, up.headers);
            res.end(text);
          });
        },
      );
      upstream.on("error", () => res.destroy());
      upstream.end(body);
    });
  }

  private record(body: Buffer, answer: string): void {
    const form = new URLSearchParams(String(body));
    const token = form.get("WebIdentityToken") ?? "";
    const roleArn = form.get("RoleArn") ?? "";
    const answered = ["AccessKeyId", "SecretAccessKey", "SessionToken"]
      .map((f) => new RegExp(`<${f}>([^<]*)</${f}>`).exec(answer)?.[1])
      .filter((v): v is string => Boolean(v));
    this.exchanges.push({ at: Date.now(), token, roleArn, answered });
  }
}
