/**
 * `npm run -s path-files -- [--kubeconfig FILE] [--warmup 1] [--idle-ms 3000] [--json FILE] [--functions]`
 *
 * Which source files one NasVolume's way from apply to Ready runs through: starts a
 * control plane (or uses --kubeconfig's, CRDs installed) and the emulator, runs
 * `aidc-operator run` from src/ as its own process with the inspector on loopback, and
 * once it is ready (and --warmup NasVolumes went Ready, so that first-use work is
 * done) takes V8's precise coverage with call counts around two windows: an idle one
 * of --idle-ms with nothing applied, then one from applying a NasVolume until its
 * status says Ready. A file is crossed when any of its functions was called in the
 * window (taking the coverage resets the counts). Prints the crossed files of src/
 * grouped by folder with their line counts, marks those the idle window ran too
 * (timers, watches: background, not the object's path), and the count. With --functions,
 * each file's line is followed by the functions of it the window called, with their counts.
 */
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { freePort } from "../../src/controlplane/controlplane.js";
import { sleep, startOperatorProcess } from "../support/operator-process.js";
import { startEnvironment } from "./environment.js";
import { isReady } from "./ready-tracker.js";
import { PATH_FILES_FLAGS } from "./script-flags.js";
import { ensureNamespace, NAS, nasVolume } from "./workload.js";

const { values: flags } = parseArgs({
  options: PATH_FILES_FLAGS,
});

const root = resolve(import.meta.dirname, "../..");
const NAMESPACE = "path-files";

/** The part of a V8 precise coverage answer this script reads. */
interface ScriptCoverage {
  scriptId: string;
  url: string;
  functions: { functionName: string; ranges: { startOffset: number; count: number }[] }[];
}

/** A minimal Chrome DevTools Protocol client over the inspector's WebSocket. */
class Inspector {
  private next = 1;
  private readonly pending = new Map<
    number,
    (msg: { result?: unknown; error?: unknown }) => void
  >();

  private constructor(private readonly ws: WebSocket) {
    ws.addEventListener("message", (e) => {
      const msg = JSON.parse(String(e.data)) as { id?: number; result?: unknown; error?: unknown };
      if (msg.id !== undefined) this.pending.get(msg.id)?.(msg);
    });
  }

  static async connect(port: number, timeoutMs = 30_000): Promise<Inspector> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      try {
        const targets = (await (await fetch(`http://127.0.0.1:${port}/json/list`)).json()) as {
          webSocketDebuggerUrl: string;
        }[];
        const url = targets[0]?.webSocketDebuggerUrl;
        if (url) {
          const ws = new WebSocket(url);
          await new Promise((ok, fail) => {
            ws.addEventListener("open", ok, { once: true });
            ws.addEventListener("error", fail, { once: true });
          });
          return new Inspector(ws);
        }
      } catch (err) {
        if (Date.now() > deadline) throw err;
      }
      await sleep(200);
    }
  }

  async send<T>(method: string, params: object = {}): Promise<T> {
    const id = this.next++;
    const answer = new Promise<{ result?: unknown; error?: unknown }>((r) =>
      this.pending.set(id, r),
    );
    this.ws.send(JSON.stringify({ id, method, params }));
    const msg = await answer;
    this.pending.delete(id);
    if (msg.error) throw new Error(`${method}: ${JSON.stringify(msg.error)}`);
    return msg.result as T;
  }

  close(): void {
    this.ws.close();
  }
}

/**
 * The src/ files (relative to the repository) with a function called since the last
 * take, each with the functions called as "name ×count" (an anonymous one as the start
 * of its code, as tsx transpiled it).
 */
async function crossedFiles(inspector: Inspector): Promise<Map<string, string[]>> {
  const { result } = await inspector.send<{ result: ScriptCoverage[] }>(
    "Profiler.takePreciseCoverage",
  );
  const files = new Map<string, string[]>();
  for (const script of result) {
    if (!script.url.startsWith("file:")) continue;
    const file = relative(root, fileURLToPath(script.url.split("?")[0] as string));
    if (!file.startsWith("src/")) continue;
    const called: string[] = [];
    let source: string | undefined;
    for (const f of script.functions) {
      const range = f.ranges[0];
      if (!range || range.count === 0) continue;
      if (flags.functions) {
        source ??= (
          await inspector.send<{ scriptSource: string }>("Debugger.getScriptSource", {
            scriptId: script.scriptId,
          })
        ).scriptSource;
        const at = source.slice(range.startOffset, range.startOffset + 50).replace(/\s+/g, " ");
        called.push(`${f.functionName || `«${at}»`} ×${range.count}`);
      } else called.push(f.functionName);
    }
    if (called.length > 0) files.set(file, called);
  }
  return files;
}

async function lineCount(file: string): Promise<number> {
  const text = await readFile(join(root, file), "utf8");
  return text.split("\n").length - (text.endsWith("\n") ? 1 : 0);
}

/** Applies NasVolume `name` and resolves once its status says Ready. */
async function applyUntilReady(env: Awaited<ReturnType<typeof startEnvironment>>, name: string) {
  const obj = nasVolume(NAMESPACE, "path", 0);
  obj.metadata = { name, namespace: NAMESPACE };
  (obj.spec as { name: string }).name = name;
  const started = Date.now();
  await env.kube.create(NAS, obj);
  const deadline = started + 120_000;
  for (;;) {
    const current = await env.kube.get(NAS, { namespace: NAMESPACE, name });
    if (current && isReady(current)) return Date.now() - started;
    if (Date.now() > deadline) throw new Error(`${name} was not Ready within 120 s`);
    await sleep(25);
  }
}

async function main(): Promise<void> {
  const progress = (line: string) => process.stderr.write(`[path-files] ${line}\n`);
  const env = await startEnvironment({}, flags.kubeconfig);
  const dir = await mkdtemp(join(tmpdir(), "path-files-"));
  const inspectPort = await freePort();
  const operator = startOperatorProcess({
    kubeconfig: env.kubeconfigPath,
    serviceBaseUrl: env.emulator.url,
    apiKey: env.apiKey,
    metricsPort: await freePort(),
    logFile: join(dir, "operator.log"),
    nodeArgs: [`--inspect=127.0.0.1:${inspectPort}`],
    env: { AIDC_WATCH_NAMESPACES: NAMESPACE },
  });
  let inspector: Inspector | undefined;
  try {
    await ensureNamespace(env.kube, NAMESPACE);
    await operator.waitReady(120_000);
    inspector = await Inspector.connect(inspectPort);
    await inspector.send("Profiler.enable");
    if (flags.functions) await inspector.send("Debugger.enable");
    await inspector.send("Profiler.startPreciseCoverage", { callCount: true, detailed: false });
    for (let i = 0; i < Number(flags.warmup); i++) {
      progress(`warm-up NasVolume ${i}: Ready in ${await applyUntilReady(env, `warmup-${i}`)} ms`);
    }
    await sleep(1_000);
    await crossedFiles(inspector);
    await sleep(Number(flags["idle-ms"]));
    const idle = await crossedFiles(inspector);
    const readyMs = await applyUntilReady(env, "measured");
    const path = await crossedFiles(inspector);
    progress(`measured NasVolume Ready in ${readyMs} ms`);

    const byFolder = new Map<string, { file: string; lines: number; idle: boolean }[]>();
    for (const file of [...path.keys()].sort()) {
      const folder = file.slice(0, file.lastIndexOf("/"));
      const rows = byFolder.get(folder) ?? [];
      rows.push({ file, lines: await lineCount(file), idle: idle.has(file) });
      byFolder.set(folder, rows);
    }
    for (const [folder, rows] of byFolder) {
      console.log(`${folder} (${rows.length})`);
      for (const r of rows) {
        console.log(
          `  ${r.file.slice(folder.length + 1)} ${r.lines}${r.idle ? "  [idle too]" : ""}`,
        );
        if (flags.functions) console.log(`    ${path.get(r.file)?.join(", ")}`);
      }
    }
    const background = [...path.keys()].filter((f) => idle.has(f)).length;
    const runtime = [...path.keys()].filter((f) => f.startsWith("src/runtime/")).length;
    console.log(
      `${path.size} files of src/ crossed from apply to Ready (${background} of them also in an idle window of ${flags["idle-ms"]} ms; ${runtime} of them the controller runtime, src/runtime)`,
    );
    if (flags.json) {
      await writeFile(
        flags.json,
        `${JSON.stringify({ readyMs, files: [...path.keys()].sort(), idle: [...idle.keys()].sort() }, null, 2)}\n`,
      );
    }
  } finally {
    inspector?.close();
    await operator.stop();
    await env.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
