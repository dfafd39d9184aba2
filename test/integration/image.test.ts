import { type ChildProcess, execFile, spawn } from "node:child_process";
import {
  chmodSync,
  chownSync,
  cpSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { root } from "../../scripts/generated-files.js";
import { freePort } from "../../src/controlplane/controlplane.js";
import { type RunningEmulator, startEmulator } from "../../src/emulator/server.js";
import { installChartCrds, runTool } from "../support/chart.js";
import { contextFiles, repositoryDockerfile, type Stage } from "../support/dockerfile.js";
import { adminKubeConfig, createNamespace, eventually } from "../support/kube.js";

/**
 * The image without a container engine: the Dockerfile's stages replayed in temporary
 * directories, each COPY as written (the context filtered by .dockerignore) and each RUN
 * done here (the build stage's `npm ci` is this checkout's node_modules, the same lock;
 * the production stage's `npm ci --omit=dev` runs for real, offline from npm's cache;
 * `npm run build` runs package.json's build script). The final stage's files are then
 * started as uid 65532 with the image's ENTRYPOINT and CMD (the base's Node 24 is this
 * one, copied to the path the ENTRYPOINT names), against the integration run's control plane
 * and the emulator, and the NasVolume and TrainingJob samples must become Ready. A COPY
 * of something a stage does not make fails the replay; something the image lacks fails
 * the start or the samples.
 */

const run = promisify(execFile);
const API_KEY = "image-test-key-0123456789abcdef";
/** The distroless base's `nonroot` user, the Dockerfile's USER. */
const NONROOT = 65532;

const { stages, ignore } = repositoryDockerfile(root);
const work = mkdtempSync(join(tmpdir(), "aidc-image-"));
chmodSync(work, 0o755);
const stageRoot = (s: Stage) => join(work, "stages", s.name ?? "final");
/** How long each RUN command took, for the record. */
const timings: string[] = [];

/** Copies `src` (a file or a directory, context-filtered when from the context) to `dest`. */
function copy(src: string, dest: string, fromContext: boolean): void {
  if (!fromContext) {
    cpSync(src, dest, { recursive: true, verbatimSymlinks: true });
    return;
  }
  const rel = src.slice(root.length + 1);
  if (statSync(src).isDirectory()) {
    for (const file of contextFiles(root, rel, ignore)) {
      const target = join(dest, file.slice(rel.length + 1));
      mkdirSync(dirname(target), { recursive: true });
      cpSync(join(root, file), target);
    }
  } else {
    mkdirSync(dirname(dest), { recursive: true });
    cpSync(src, dest);
  }
}

/** Does one command of a RUN step in `dir`, the stage's WORKDIR. */
async function runCommand(
  command: string,
  dir: string,
  args: Record<string, string>,
): Promise<void> {
  const started = Date.now();
  if (/^npm cache clean/.test(command)) return; // would clean this machine's cache
  if (/^npm ci\b/.test(command) && !command.includes("--omit=dev")) {
    // The build stage's full install: this checkout's, from the same package-lock.json.
    symlinkSync(join(root, "node_modules"), join(dir, "node_modules"));
  } else if (/^npm ci\b/.test(command)) {
    const flags = command.split(/\s+/).slice(1);
    await run("npm", [...flags, "--offline", "--loglevel=error"], { cwd: dir });
  } else if (command === "npm run build") {
    const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as {
      scripts: { build: string };
    };
    await run("sh", ["-c", pkg.scripts.build], {
      cwd: dir,
      env: {
        ...process.env,
        ...args,
        PATH: `${join(dir, "node_modules/.bin")}:${process.env.PATH}`,
      },
    });
  } else {
    throw new Error(`the image test does not know how to run \`${command}\`: teach it`);
  }
  timings.push(`${command.split(" --")[0]}: ${((Date.now() - started) / 1000).toFixed(1)} s`);
}

/** Replays every stage; returns the final stage's root. */
async function assemble(): Promise<string> {
  for (const stage of stages) {
    const dir = stageRoot(stage);
    const wd = join(dir, stage.workdir);
    mkdirSync(wd, { recursive: true });
    for (const step of stage.steps) {
      if (step.kind === "RUN") {
        for (const command of step.commands) await runCommand(command, wd, stage.args);
        continue;
      }
      const from = step.from ? stages.find((s) => s.name === step.from) : undefined;
      if (step.from && !from) throw new Error(`COPY --from=${step.from}: no such stage`);
      for (const src of step.sources) {
        const source = from ? join(stageRoot(from), src) : join(root, src);
        const dest = step.dest.endsWith("/")
          ? join(wd, step.dest, src.split("/").filter(Boolean).at(-1) ?? src)
          : join(wd, step.dest);
        try {
          statSync(source);
        } catch {
          throw new Error(`COPY ${step.from ? `--from=${step.from} ` : ""}${src}: not there`);
        }
        copy(source, dest, !from);
      }
    }
  }
  return stageRoot(stages.at(-1) as Stage);
}

describe("the image's files, assembled from the Dockerfile without Docker", () => {
  let emulator: RunningEmulator | undefined;
  let operator: ChildProcess | undefined;

  afterAll(async () => {
    operator?.kill("SIGKILL");
    await emulator?.stop();
    rmSync(work, { recursive: true, force: true });
  });

  it("run as uid 65532 with the image's entry point and bring the samples to Ready", async () => {
    const image = await assemble();
    console.info(`image test: ${timings.join("; ")}`);
    const final = stages.at(-1) as Stage;
    expect(final.user).toBe(`${NONROOT}:${NONROOT}`);
    const [node = "", ...entry] = [...(final.entrypoint ?? []), ...(final.cmd ?? [])];
    // The base's part: Node 24 at the path the ENTRYPOINT names (this one, copied there,
    // since the user cannot reach it where it is installed).
    expect(node).toBe("/nodejs/bin/node");
    const nodeBinary = join(image, node);
    mkdirSync(dirname(nodeBinary), { recursive: true });
    cpSync(process.execPath, nodeBinary);

    await installChartCrds();
    emulator = await startEmulator({ apiKey: API_KEY });
    const namespace = await createNamespace(adminKubeConfig(), "image");
    // The kubelet's part: a kubeconfig only the operator's user reads.
    const kubeconfig = join(work, "kubeconfig");
    writeFileSync(kubeconfig, adminKubeConfig().exportConfig(), { mode: 0o600 });
    chownSync(kubeconfig, NONROOT, NONROOT);

    const logs: string[] = [];
    const child = spawn(nodeBinary, entry, {
      cwd: join(image, final.workdir),
      uid: NONROOT,
      gid: NONROOT,
      env: {
        ...final.env,
        PATH: process.env.PATH,
        KUBECONFIG: kubeconfig,
        AIDC_API_KEY: API_KEY,
        AIDC_SERVICE_BASE_URL: emulator.url,
        AIDC_SERVICE_ALLOW_INSECURE_HTTP: "true",
        AIDC_WATCH_NAMESPACES: namespace,
        AIDC_METRICS_PORT: String(await freePort()),
        AIDC_POLL_INTERVAL_MS: "1000",
        AIDC_LOG_LEVEL: "info",
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    operator = child;
    child.stdout?.on("data", (d: Buffer) => logs.push(d.toString()));
    child.stderr?.on("data", (d: Buffer) => logs.push(d.toString()));
    const exited = new Promise<number | null>((r) => child.on("exit", (code) => r(code)));

    const uid = readFileSync(`/proc/${child.pid}/status`, "utf8").match(/^Uid:\s+(\d+)/m)?.[1];
    expect(uid).toBe(String(NONROOT));

    await runTool("kubectl", [
      ...["apply", "-n", namespace],
      ...["-f", join(root, "deploy/samples/nasvolume.yaml")],
      ...["-f", join(root, "deploy/samples/trainingjob.yaml")],
    ]);
    let pending = "nothing read yet";
    await eventually(async () => {
      const { stdout } = await runTool("kubectl", ["get", "nas,tj", "-n", namespace, "-o", "json"]);
      const items = (
        JSON.parse(stdout) as {
          items: {
            kind: string;
            status?: { conditions?: { type: string; status: string; reason?: string }[] };
          }[];
        }
      ).items;
      const ready = (o: (typeof items)[0]) =>
        o.status?.conditions?.find((c) => c.type === "Ready")?.status === "True";
      pending = items
        .filter((o) => !ready(o))
        .map((o) => `${o.kind}: ${JSON.stringify(o.status?.conditions ?? [])}`)
        .join("; ");
      return items.length === 2 && items.every(ready);
    }, 90_000).catch(() => undefined);
    expect(pending, logs.join("").slice(-4000)).toBe("");

    child.kill("SIGTERM");
    expect(await exited).toBe(0);
    operator = undefined;
    // The build and the production install take minutes on a loaded machine.
  }, 900_000);
});
