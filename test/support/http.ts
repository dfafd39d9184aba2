import { request as httpsRequest, type RequestOptions } from "node:https";
import type * as k8s from "@kubernetes/client-node";

/** The answer of {@link kubeRequest}: status code and body text. */
export interface KubeResponse {
  status: number;
  body: string;
}

/**
 * One raw request to the API server of `kc` (its TLS and credentials applied). For
 * what the typed clients cannot do: other Accept types (Table output, OpenAPI v3) and
 * bodies that must reach the server verbatim. client-node's typed serializer keeps
 * only the properties its models name (`_enum`, `xKubernetesValidations`...), so a
 * plain-JSON CRD sent through it loses its enums, defaults and CEL rules.
 */
export async function kubeRequest(
  kc: k8s.KubeConfig,
  method: string,
  path: string,
  options: { body?: unknown; contentType?: string; accept?: string } = {},
): Promise<KubeResponse> {
  const cluster = kc.getCurrentCluster();
  if (!cluster) throw new Error("kubeconfig has no current cluster");
  const url = new URL(path, cluster.server);
  const opts: RequestOptions = {
    method,
    hostname: url.hostname,
    port: url.port,
    path: `${url.pathname}${url.search}`,
    headers: { Accept: options.accept ?? "application/json" },
  };
  await kc.applyToHTTPSOptions(opts);
  const payload = options.body === undefined ? undefined : JSON.stringify(options.body);
  if (payload !== undefined) {
    opts.headers = {
      ...opts.headers,
      "Content-Type": options.contentType ?? "application/json",
      "Content-Length": Buffer.byteLength(payload),
    };
  }
  return new Promise((resolveResponse, reject) => {
    const req = httpsRequest(opts, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () =>
        resolveResponse({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }),
      );
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end(payload);
  });
}
