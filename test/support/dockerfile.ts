/**
 * The Dockerfile read as data: its stages, their WORKDIR, COPY and RUN instructions, and
 * the final stage's ENTRYPOINT; and the build context `.dockerignore` lets in. The unit
 * test holds the COPY lines to the build's outputs; the image test replays the stages in
 * temporary directories, without a container engine.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";

/** One COPY instruction. */
export interface CopyStep {
  kind: "COPY";
  /** The stage copied from, or undefined for the build context. */
  from?: string;
  sources: string[];
  dest: string;
}

/** One RUN instruction, split into its `&&` commands. */
export interface RunStep {
  kind: "RUN";
  commands: string[];
}

/** One stage: what it starts from, its name, its working directory and its steps. */
export interface Stage {
  base: string;
  name?: string;
  /** The last WORKDIR (absolute), `/` when none. */
  workdir: string;
  steps: (CopyStep | RunStep)[];
  /** The final stage's ENTRYPOINT and CMD (exec form), if given. */
  entrypoint?: string[];
  cmd?: string[];
  user?: string;
  /** ENV settings (`ENV A=b`). */
  env: Record<string, string>;
  /** The stage's `ARG name=default` values: the environment of its RUN commands. */
  args: Record<string, string>;
}

/** The stages of a Dockerfile text, in order. */
export function parseDockerfile(text: string): Stage[] {
  const lines = text
    .replace(/\\\n/g, " ")
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith("#"));
  const stages: Stage[] = [];
  for (const line of lines) {
    const [instruction = "", ...rest] = line.split(/\s+/);
    const args = rest.join(" ");
    const stage = stages.at(-1);
    switch (instruction.toUpperCase()) {
      case "FROM": {
        const m = /^(\S+)(?:\s+AS\s+(\S+))?$/i.exec(args);
        stages.push({
          base: m?.[1] ?? args,
          ...(m?.[2] ? { name: m[2] } : {}),
          workdir: "/",
          steps: [],
          env: {},
          args: {},
        });
        break;
      }
      case "WORKDIR":
        if (stage) stage.workdir = args.startsWith("/") ? args : join(stage.workdir, args);
        break;
      case "COPY": {
        const words = args.split(/\s+/);
        const flags = words.filter((w) => w.startsWith("--"));
        const paths = words.filter((w) => !w.startsWith("--"));
        const from = flags.find((f) => f.startsWith("--from="))?.slice("--from=".length);
        stage?.steps.push({
          kind: "COPY",
          ...(from ? { from } : {}),
          sources: paths.slice(0, -1),
          dest: paths.at(-1) ?? "",
        });
        break;
      }
      case "RUN":
        stage?.steps.push({ kind: "RUN", commands: args.split("&&").map((c) => c.trim()) });
        break;
      case "ENTRYPOINT":
        if (stage) stage.entrypoint = JSON.parse(args) as string[];
        break;
      case "CMD":
        if (stage) stage.cmd = JSON.parse(args) as string[];
        break;
      case "USER":
        if (stage) stage.user = args;
        break;
      case "ARG": {
        const [key, ...value] = args.split("=");
        if (stage && key && value.length > 0) stage.args[key] = value.join("=");
        break;
      }
      case "ENV":
        for (const pair of rest) {
          const [key, ...value] = pair.split("=");
          if (stage && key) stage.env[key] = value.join("=");
        }
        break;
    }
  }
  return stages;
}

/** A `.dockerignore` glob as a regular expression over context paths. */
function globToRegExp(glob: string): RegExp {
  const toRegExp = (part: string) =>
    part
      .replaceAll(/[.+^${}()|[\]\\]/g, "\\$&")
      .replaceAll("*", "[^/]*")
      .replaceAll("?", "[^/]");
  // `**/` is any number of directories, none included; a lone `**` anything.
  const body = glob
    .replace(/\/$/, "")
    .split("**/")
    .map((part) => part.split("**").map(toRegExp).join(".*"))
    .join("(?:.*/)?");
  return new RegExp(`^${body}$`);
}

/**
 * True when `.dockerignore`'s patterns let `path` (relative to the context) in: the last
 * pattern that matches the path or one of its parent directories decides; `!` lets in.
 */
export function inContext(patterns: readonly string[], path: string): boolean {
  const parts = path.split("/");
  const prefixes = parts.map((_, i) => parts.slice(0, i + 1).join("/"));
  let included = true;
  for (const raw of patterns) {
    const negated = raw.startsWith("!");
    const re = globToRegExp(negated ? raw.slice(1) : raw);
    if (prefixes.some((p) => re.test(p))) included = negated;
  }
  return included;
}

/** The patterns of a `.dockerignore` text. */
export function dockerignorePatterns(text: string): string[] {
  return text
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith("#"));
}

/** Every file under `dir` (relative to `root`) that the context lets in. */
export function contextFiles(root: string, dir: string, patterns: readonly string[]): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile())
    .map((e) => relative(root, join(e.parentPath, e.name)))
    .filter((p) => inContext(patterns, p));
}

/** The repository's Dockerfile and .dockerignore. */
export function repositoryDockerfile(root: string): { stages: Stage[]; ignore: string[] } {
  return {
    stages: parseDockerfile(readFileSync(join(root, "Dockerfile"), "utf8")),
    ignore: dockerignorePatterns(readFileSync(join(root, ".dockerignore"), "utf8")),
  };
}

/** What `npm run build` writes, relative to the build stage's WORKDIR: tsc's outDir. */
export function buildOutDir(root: string): string {
  const config = JSON.parse(readFileSync(join(root, "tsconfig.build.json"), "utf8")) as {
    compilerOptions: { outDir: string };
  };
  return config.compilerOptions.outDir.replace(/^\.\//, "").replace(/\/$/, "");
}

/** The paths (absolute, in the stage) a stage's RUN commands produce. */
function runOutputs(stage: Stage, root: string): string[] {
  return stage.steps.flatMap((step) =>
    step.kind !== "RUN"
      ? []
      : step.commands.flatMap((c) => {
          if (/^npm ci\b/.test(c)) return [join(stage.workdir, "node_modules")];
          if (c === "npm run build") return [join(stage.workdir, buildOutDir(root))];
          return [];
        }),
  );
}

/** The paths (absolute, in the stage) a stage's COPY steps write. */
function copyOutputs(stage: Stage): string[] {
  return stage.steps.flatMap((step) =>
    step.kind !== "COPY"
      ? []
      : step.sources.map((src) =>
          step.dest.endsWith("/")
            ? join(stage.workdir, step.dest, src.split("/").filter(Boolean).at(-1) ?? src)
            : join(stage.workdir, step.dest),
        ),
  );
}

const under = (path: string, dir: string) => path === dir || path.startsWith(`${dir}/`);

/**
 * What is wrong with the Dockerfile's COPY lines: a context file that is missing or that
 * `.dockerignore` keeps out, a path copied from a stage that the stage does not produce,
 * and, in the final stage, a missing `package.json`, `node_modules`, or the script the
 * ENTRYPOINT runs. Empty when all is well.
 */
export function copyProblems(
  stages: readonly Stage[],
  ignore: readonly string[],
  root: string,
  exists: (path: string) => boolean,
): string[] {
  const problems: string[] = [];
  const byName = new Map(stages.flatMap((s) => (s.name ? [[s.name, s] as const] : [])));
  for (const stage of stages) {
    for (const step of stage.steps) {
      if (step.kind !== "COPY") continue;
      for (const src of step.sources) {
        if (step.from === undefined) {
          const path = src.replace(/\/$/, "");
          if (!exists(join(root, path))) problems.push(`COPY ${src}: not in the repository`);
          else if (!inContext(ignore, path))
            problems.push(`COPY ${src}: .dockerignore keeps it out`);
          continue;
        }
        const from = byName.get(step.from);
        if (!from) {
          problems.push(`COPY --from=${step.from}: no such stage`);
          continue;
        }
        const produced = [...runOutputs(from, root), ...copyOutputs(from)];
        if (!produced.some((p) => under(src, p))) {
          problems.push(
            `COPY --from=${step.from} ${src}: the stage does not produce it (it makes ${produced.join(", ")})`,
          );
        }
      }
    }
  }
  const final = stages.at(-1);
  if (final) {
    const shipped = copyOutputs(final);
    const script = final.entrypoint?.find((a) => a.endsWith(".js"));
    const needed = [
      join(final.workdir, "package.json"),
      join(final.workdir, "node_modules"),
      ...(script ? [join(final.workdir, script)] : []),
    ];
    for (const need of needed) {
      if (!shipped.some((p) => under(need, p))) problems.push(`the final stage lacks ${need}`);
    }
  }
  return problems;
}
