import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { RuntimeMetrics } from "./metrics.js";

/** One named check of /readyz; `undefined` means passing, a string says what is wrong. */
export type ReadinessCheck = () => string | undefined;

/** Options of the {@link HealthServer}. */
export interface HealthServerOptions {
  /** 0 picks a free port. */
  port: number;
  /** Default `0.0.0.0` (the pod's probes and Prometheus come from outside). */
  host?: string;
  metrics: RuntimeMetrics;
  /** /readyz answers 200 only when every check passes. */
  readiness: Record<string, ReadinessCheck>;
  /** /healthz answers 200 while this returns undefined (default: always). */
  liveness?: ReadinessCheck;
}

/**
 * The HTTP server of `/metrics` (Prometheus text), `/healthz` (the process serves) and
 * `/readyz` (caches synced, controllers running on the leader). Failing checks are
 * listed in the body, one `[-]name: reason` line each, as kube-apiserver does.
 */
export class HealthServer {
  private server?: Server;

  constructor(private readonly options: HealthServerOptions) {}

  /** Listens; resolves with the port. */
  async start(): Promise<number> {
    const server = createServer((req, res) => {
      const path = (req.url ?? "/").split("?")[0];
      const send = (code: number, body: string, type = "text/plain; charset=utf-8") => {
        res.writeHead(code, { "Content-Type": type });
        res.end(body);
      };
      if (path === "/metrics") {
        this.options.metrics.text().then(
          (text) => send(200, text, this.options.metrics.registry.contentType),
          (err: unknown) => send(500, String(err)),
        );
        return;
      }
      if (path === "/healthz" || path === "/livez") {
        const problem = this.options.liveness?.();
        send(problem ? 500 : 200, problem ? `[-]live: ${problem}\n` : "ok\n");
        return;
      }
      if (path === "/readyz") {
        const lines: string[] = [];
        let ok = true;
        for (const [name, check] of Object.entries(this.options.readiness)) {
          const problem = check();
          if (problem) ok = false;
          lines.push(problem ? `[-]${name}: ${problem}` : `[+]${name} ok`);
        }
        send(
          ok ? 200 : 503,
          `${lines.join("\n")}\n${ok ? "readyz check passed" : "readyz check failed"}\n`,
        );
        return;
      }
      send(404, "not found\n");
    });
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(this.options.port, this.options.host ?? "0.0.0.0", () => resolve());
    });
    return (server.address() as AddressInfo).port;
  }

  /** Stops listening and closes open connections. */
  async stop(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
