/**
 * The Kubernetes transport's cost, measured through `KubeClient` against a local
 * control plane: CPU milliseconds per request (sequential GETs, concurrent GETs, and
 * writes echoed to a set of watches), the process's RSS and heap at the end, and the
 * connections it opened (counted by a loopback TCP proxy in front of the API server).
 * Each tree given runs in a fresh child process, so that trees can be compared in one
 * run: e.g. a checkout of the previous transport beside this one.
 *
 *   tsx test/bench/kube-transport.ts [--tree DIR]... [--kubeconfig FILE]
 *
 * Without `--tree`, this checkout; without `--kubeconfig`, a control plane of its own
 * (tools/controlplane/build.sh's binaries, AIDC_CONTROLPLANE_BIN_DIR).
 */
import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { parse, stringify } from "yaml";
import { TcpProxy } from "../support/tcp-proxy.js";

const GETS = 3_000;
const CONCURRENCY = 50;
const WATCHES = 20;
const WRITES = 300;

interface ChildResult {
  sequentialGetCpuMs: number;
  concurrentGetCpuMs: number;
  writeWithEchoesCpuMs: number;
  rssMiB: number;
  heapUsedMiB: number;
  wallMs: number;
}

const root = resolve(import.meta.dirname, "../..");

async function parent(): Promise<void> {
  const { values } = parseArgs({
    options: { tree: { type: "string", multiple: true }, kubeconfig: { type: "string" } },
  });
  const trees = (values.tree ?? [root]).map((t) => resolve(t));
  let stop = async () => {};
  let kubeconfig = values.kubeconfig;
  if (!kubeconfig) {
    const { LocalControlPlane } = await import("../../src/controlplane/controlplane.js");
    const plane = await new LocalControlPlane().start();
    stop = async () => {
      await plane.stop();
    };
    kubeconfig = plane.kubeconfigPath;
  }
  const dir = await mkdtemp(join(tmpdir(), "kube-transport-bench-"));
  try {
    const doc = parse(await readFile(kubeconfig, "utf8")) as {
      clusters: { cluster: { server: string } }[];
    };
    const cluster = doc.clusters[0]?.cluster;
    if (!cluster) throw new Error("the kubeconfig has no cluster");
    const target = Number(new URL(cluster.server).port);
    const rows: string[] = [];
    for (const tree of trees) {
      const proxy = new TcpProxy(target);
      const port = await proxy.start();
      cluster.server = `https://127.0.0.1:${port}`;
      const viaProxy = join(dir, "kubeconfig");
      await writeFile(viaProxy, stringify(doc));
      try {
        const out = await new Promise<string>((res, rej) =>
          execFile(
            process.execPath,
            [...process.execArgv, "--expose-gc", import.meta.filename, "--child", tree, viaProxy],
            { cwd: tree, maxBuffer: 1 << 20 },
            (err, stdout, stderr) =>
              err ? rej(new Error(`${err.message}\n${stderr}`)) : res(stdout),
          ),
        );
        const r = JSON.parse(out.trim().split("\n").at(-1) ?? "{}") as ChildResult;
        rows.push(
          `| ${tree} | ${r.sequentialGetCpuMs.toFixed(3)} | ${r.concurrentGetCpuMs.toFixed(3)} | ` +
            `${r.writeWithEchoesCpuMs.toFixed(3)} | ${r.rssMiB.toFixed(1)} | ${r.heapUsedMiB.toFixed(1)} | ` +
            `${proxy.accepted} | ${(r.wallMs / 1000).toFixed(1)} |`,
        );
      } finally {
        await proxy.stop();
      }
    }
    console.log(
      `${GETS} GETs one at a time, ${GETS} GETs ${CONCURRENCY} at a time, ${WRITES} creates ` +
        `each echoed to ${WATCHES} watches; CPU ms per request (user+system)\n`,
    );
    console.log(
      "| tree | CPU/GET seq | CPU/GET conc | CPU/create+echoes | RSS MiB | heap MiB | connections | wall s |",
    );
    console.log("|---|---|---|---|---|---|---|---|");
    for (const r of rows) console.log(r);
  } finally {
    await rm(dir, { recursive: true, force: true });
    await stop();
  }
}

async function child(tree: string, kubeconfig: string): Promise<void> {
  const runtime = (f: string) => pathToFileURL(join(tree, "src/runtime", f)).href;
  const { KubeClient } = (await import(
    runtime("kube.ts")
  )) as typeof import("../../src/runtime/kube.js");
  const { loadKubeConfig } = (await import(
    runtime("kube-config.ts")
  )) as typeof import("../../src/runtime/kube-config.js");
  const config = await loadKubeConfig({ kubeconfig, env: {} });
  const kube = new KubeClient(config, { rateLimit: { qps: 1e6, burst: 1e6 } });
  const NS = {
    group: "",
    version: "v1",
    plural: "namespaces",
    kind: "Namespace",
    namespaced: false,
  };
  const CM = {
    group: "",
    version: "v1",
    plural: "configmaps",
    kind: "ConfigMap",
    namespaced: true,
  };
  const namespace = `bench-transport-${Math.random().toString(36).slice(2, 8)}`;
  await kube.create(NS, { metadata: { name: namespace } });
  await kube.create(CM, { metadata: { name: "probe", namespace }, data: { a: "b" } });
  const key = { namespace, name: "probe" };
  const cpu = () => {
    const u = process.cpuUsage();
    return (u.user + u.system) / 1000;
  };
  const started = Date.now();
  // Warm-up: JIT, TLS session, connection.
  for (let i = 0; i < 300; i++) await kube.get(CM, key);

  let t = cpu();
  for (let i = 0; i < GETS; i++) await kube.get(CM, key);
  const sequentialGetCpuMs = (cpu() - t) / GETS;

  t = cpu();
  for (let done = 0; done < GETS; done += CONCURRENCY) {
    await Promise.all(Array.from({ length: CONCURRENCY }, () => kube.get(CM, key)));
  }
  const concurrentGetCpuMs = (cpu() - t) / GETS;

  const { resourceVersion } = await kube.list(CM, namespace);
  let events = 0;
  const watches = await Promise.all(
    Array.from({ length: WATCHES }, () =>
      kube.transport.watch(
        `/api/v1/namespaces/${namespace}/configmaps`,
        { resourceVersion, allowWatchBookmarks: "true" },
        (type) => {
          if (type === "ADDED") events++;
        },
        () => undefined,
      ),
    ),
  );
  t = cpu();
  for (let i = 0; i < WRITES; i += 10) {
    await Promise.all(
      Array.from({ length: 10 }, (_, j) =>
        kube.create(CM, {
          metadata: { name: `cm-${i + j}`, namespace },
          data: { i: String(i + j) },
        }),
      ),
    );
  }
  while (events < WRITES * WATCHES) await new Promise((r) => setTimeout(r, 20));
  const writeWithEchoesCpuMs = (cpu() - t) / WRITES;
  for (const w of watches) w.abort();
  await kube.delete(NS, { namespace: "", name: namespace });
  (globalThis as { gc?: () => void }).gc?.();
  const mem = process.memoryUsage();
  const result: ChildResult = {
    sequentialGetCpuMs,
    concurrentGetCpuMs,
    writeWithEchoesCpuMs,
    rssMiB: mem.rss / 1048576,
    heapUsedMiB: mem.heapUsed / 1048576,
    wallMs: Date.now() - started,
  };
  console.log(JSON.stringify(result));
  process.exit(0);
}

const i = process.argv.indexOf("--child");
if (i >= 0) await child(process.argv[i + 1] ?? root, process.argv[i + 2] ?? "");
else await parent();
