/**
 * A Kubernetes client of its own beside the fairness scenario (fairness-probe.ts): in its
 * own process and on its own connection, it PATCHes one ConfigMap every 50 ms and prints
 * each answer as a line `<epoch ms> <latency ms>`, so that the API server's latency as
 * anyone sees it is measured without the operator's or the bench's event loop in it.
 *
 *   tsx test/bench/api-pacer.ts KUBECONFIG NAMESPACE
 */
import https from "node:https";
import * as k8s from "@kubernetes/client-node";

const [file, namespace] = process.argv.slice(2);
if (!file || !namespace) throw new Error("usage: api-pacer.ts KUBECONFIG NAMESPACE");
const kc = new k8s.KubeConfig();
kc.loadFromFile(file);
const server = new URL(kc.getCurrentCluster()?.server ?? "");
const options: https.RequestOptions = {};
await kc.applyToHTTPSOptions(options);
const agent = new https.Agent({ keepAlive: true, maxSockets: 1 });
const path = `/api/v1/namespaces/${namespace}/configmaps`;

function send(method: string, to: string, body: unknown, type: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = https.request(
      {
        ...options,
        agent,
        host: server.hostname,
        port: server.port,
        method,
        path: to,
        headers: { ...options.headers, "content-type": type },
      },
      (res) => {
        res.resume();
        res.on("end", () => resolve(res.statusCode ?? 0));
      },
    );
    req.on("error", reject);
    req.end(JSON.stringify(body));
  });
}

await send("POST", path, { metadata: { name: "api-pacer" } }, "application/json");
for (let i = 0; ; i++) {
  const started = performance.now();
  const code = await send(
    "PATCH",
    `${path}/api-pacer`,
    { data: { i: String(i) } },
    "application/merge-patch+json",
  ).catch(() => 0);
  if (code === 200) {
    process.stdout.write(`${Date.now()} ${(performance.now() - started).toFixed(1)}\n`);
  }
  await new Promise((r) => setTimeout(r, 50));
}
