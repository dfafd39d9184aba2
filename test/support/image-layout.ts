/**
 * The operator as the image holds it: `npm run build` into `<dir>/dist` beside a copy of
 * package.json, as the Dockerfile lays out /app (WORKDIR, package.json, dist/bundle),
 * and `node <IMAGE_NODE_ARGS> dist/bundle/main.js <command>` run from `<dir>` as its
 * ENTRYPOINT does. `<dir>` is under the project's .tmp/ (ignored by git), so the
 * project's node_modules stand for the image's.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { copyFile, mkdir, mkdtemp, rm } from "node:fs/promises";
import { join, resolve } from "node:path";
import { BUNDLE_ENTRY } from "../../scripts/bundle-dist.js";
import { buildOperator, IMAGE_NODE_ARGS } from "./operator-process.js";

const root = resolve(import.meta.dirname, "../..");

/** A command of the bundle as a child process, its output collected. */
export interface BundleProcess {
  child: ChildProcess;
  out: { stdout: string; stderr: string };
  /** Resolves with the exit code (null when a signal ended it). */
  exited: Promise<number | null>;
}

/** A built image layout; see the module comment. */
export interface ImageLayout {
  /** The layout's root (the image's /app). */
  dir: string;
  /** The bundle's entry, an absolute path. */
  entry: string;
  /** Starts `aidc-operator <args>` from the bundle with only `env` (and PATH, HOME) set. */
  start(args: string[], env?: Record<string, string>): BundleProcess;
  /** {@link start}, then waits for its exit. */
  run(
    args: string[],
    env?: Record<string, string>,
  ): Promise<{ code: number | null; stdout: string; stderr: string }>;
  /** Ends what is still running and removes the layout. */
  remove(): Promise<void>;
}

/**
 * Builds the operator into a fresh image layout; fails with the build's output when a
 * step fails or prints anything.
 */
export async function buildImageLayout(): Promise<ImageLayout> {
  await mkdir(join(root, ".tmp"), { recursive: true });
  const dir = await mkdtemp(join(root, ".tmp", "image-"));
  const children = new Set<ChildProcess>();
  try {
    await copyFile(join(root, "package.json"), join(dir, "package.json"));
    const build = await buildOperator(join(dir, "dist"));
    if (build.exitCode !== 0 || build.output !== "") {
      throw new Error(`npm run build exited ${build.exitCode}:\n${build.output}`);
    }
  } catch (err) {
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
  const entry = join(dir, "dist", BUNDLE_ENTRY);
  const start = (args: string[], env: Record<string, string> = {}): BundleProcess => {
    const child = spawn(process.execPath, [...IMAGE_NODE_ARGS, entry, ...args], {
      cwd: dir,
      env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    children.add(child);
    const out = { stdout: "", stderr: "" };
    child.stdout?.on("data", (d) => {
      out.stdout += d;
    });
    child.stderr?.on("data", (d) => {
      out.stderr += d;
    });
    const exited = new Promise<number | null>((r) =>
      child.once("close", (code) => {
        children.delete(child);
        r(code);
      }),
    );
    return { child, out, exited };
  };
  return {
    dir,
    entry,
    start,
    run: async (args, env) => {
      const p = start(args, env);
      const code = await p.exited;
      return { code, ...p.out };
    },
    remove: async () => {
      for (const child of children) child.kill("SIGKILL");
      await rm(dir, { recursive: true, force: true });
    },
  };
}
