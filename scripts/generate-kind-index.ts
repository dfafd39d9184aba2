/**
 * Writes the two generated indexes that make a kind's service side local to its own
 * files: src/service/kinds/index.ts gathers the `endpoints` each
 * src/service/kinds/<kind>.ts declares (into the endpoint table, so the client, the
 * configuration's overrides and docs/service-endpoints.md know them), and
 * src/emulator/kinds/index.ts the `handlers` each src/emulator/kinds/<kind>.ts
 * declares (so the emulator serves them), and src/emulator/kinds/settings-index.ts the
 * `settings` each src/emulator/kinds/<kind>.settings.ts declares (so the emulator's
 * behaviour, admin API and CLI take them). Adding a kind's modules there and running
 * `npm run generate` is all it takes; no existing file is edited. `--check` fails when
 * an index is stale.
 *
 *   tsx scripts/generate-kind-index.ts [--check]
 */
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import {
  checkMode,
  type GeneratedFiles,
  generatedHeader,
  reportGenerated,
  root,
  syncGeneratedFiles,
} from "./generated-files.js";

/** The kinds' service modules. */
export const SERVICE_KINDS_DIR = "src/service/kinds";
/** The kinds' emulator modules. */
export const EMULATOR_KINDS_DIR = "src/emulator/kinds";

/** A kind module's name: its file name without `.ts`, lower case (e.g. `blockvolume`). */
const MODULE_NAME = /^[a-z][a-z0-9]*$/;

/** The generated indexes' file names (no kind module). */
const INDEX_FILES = new Set(["index.ts", "settings-index.ts"]);
/** How a kind's emulator settings module is named: `<kind>.settings.ts`. */
const SETTINGS_SUFFIX = ".settings.ts";
/**
 * A part of a kind's module, `<kind>.<part>.ts` (e.g. `trainingjob.pods.ts`): imported
 * by the kind's own module, not by an index.
 */
const MODULE_PART = /^[^.]+\.[^.]+\.ts$/;

/**
 * The kind modules of `dir` (every `<name>.ts` but the indexes, tests, settings modules
 * and parts `<name>.<part>.ts`), or with `suffix` the `<name><suffix>` modules; the
 * names, sorted.
 */
export function kindModules(dir: string, suffix = ".ts"): string[] {
  const abs = join(root, dir);
  if (!existsSync(abs)) return [];
  const names = readdirSync(abs)
    .filter(
      (f) =>
        f.endsWith(suffix) &&
        !f.endsWith(".test.ts") &&
        (suffix !== ".ts" || !MODULE_PART.test(f)) &&
        !INDEX_FILES.has(f),
    )
    .map((f) => f.slice(0, -suffix.length))
    .sort();
  for (const name of names) {
    if (!MODULE_NAME.test(name)) {
      throw new Error(
        `${dir}/${name}${suffix}: a kind module is named <kind in lower case>${suffix}`,
      );
    }
  }
  return names;
}

/** `text` as biome formats it (the generated indexes must pass `npm run lint`). */
function formatted(path: string, text: string): string {
  return execFileSync(
    join(root, "node_modules/.bin/biome"),
    ["format", `--stdin-file-path=${path}`],
    {
      cwd: root,
      input: text,
      encoding: "utf8",
    },
  );
}

/**
 * The source of an index that imports `exported` of every module in `modules` (each
 * `<module><suffix>`, `.ts` by default).
 */
function indexSource(
  dir: string,
  modules: readonly string[],
  exported: string,
  doc: string,
  tables: { name: string; doc: string } | undefined,
  merged: { name: string; doc: string; satisfies?: string },
  suffix = ".ts",
  preamble: readonly string[] = [],
): string {
  const stem = suffix.slice(0, -".ts".length);
  const lines = [
    generatedHeader("scripts/generate-kind-index.ts", `${dir}/*${suffix}`, "//").trimEnd(),
    `/**\n * ${doc.split("\n").join("\n * ")}\n */`,
    ...modules.map((m) => `import { ${exported} as ${m} } from "./${m}${stem}.js";`),
    "",
    ...preamble,
  ];
  if (tables) {
    lines.push(`/** ${tables.doc} */`);
    lines.push(`export const ${tables.name} = { ${modules.join(", ")} } as const;`, "");
  }
  lines.push(`/** ${merged.doc} */`);
  lines.push(
    `export const ${merged.name} = { ${modules.map((m) => `...${m}`).join(", ")} } as const${
      merged.satisfies ? ` satisfies ${merged.satisfies}` : ""
    };`,
  );
  return `${lines.join("\n")}\n`;
}

/** The content of both indexes, by path. */
export function kindIndexFiles(): GeneratedFiles {
  const files: GeneratedFiles = new Map();
  const service = `${SERVICE_KINDS_DIR}/index.ts`;
  files.set(
    service,
    formatted(
      service,
      indexSource(
        SERVICE_KINDS_DIR,
        kindModules(SERVICE_KINDS_DIR),
        "endpoints",
        "The service operations each kind declares in its own module of src/service/kinds\n(its `endpoints`), gathered for the endpoint table (../endpoints.ts).",
        { name: "KIND_ENDPOINT_TABLES", doc: "Each kind module's endpoints, by module name." },
        { name: "KIND_ENDPOINTS", doc: "Every kind module's endpoints in one table." },
      ),
    ),
  );
  const emulator = `${EMULATOR_KINDS_DIR}/index.ts`;
  files.set(
    emulator,
    formatted(
      emulator,
      indexSource(
        EMULATOR_KINDS_DIR,
        kindModules(EMULATOR_KINDS_DIR),
        "handlers",
        "The emulator's handlers of each kind's own operations, declared in its module of\nsrc/emulator/kinds (its `handlers`), gathered for the emulator's server (../server.ts).",
        undefined,
        { name: "KIND_HANDLERS", doc: "Every kind module's handlers, by endpoint name." },
      ),
    ),
  );
  const settings = `${EMULATOR_KINDS_DIR}/settings-index.ts`;
  files.set(
    settings,
    formatted(
      settings,
      indexSource(
        EMULATOR_KINDS_DIR,
        kindModules(EMULATOR_KINDS_DIR, SETTINGS_SUFFIX),
        "settings",
        "The emulator settings each kind declares in its src/emulator/kinds/<kind>.settings.ts\n(its `settings`, importing nothing), gathered for the emulator's behaviour\n(../kind-settings.ts).",
        undefined,
        {
          name: "KIND_SETTINGS",
          doc: "Every kind's emulator settings, by name.",
          satisfies: "Readonly<Record<string, KindSetting>>",
        },
        SETTINGS_SUFFIX,
        [
          "/** A kind's emulator setting: a non-negative integer (a duration in ms, a count). */",
          "export interface KindSetting {",
          "  /** Its value unless the start options, the CLI or the admin API set one. */",
          "  readonly default: number;",
          "  /** What it sets, in a few words (the CLI flag's help). */",
          "  readonly description: string;",
          "}",
          "",
        ],
      ),
    ),
  );
  return files;
}

if (import.meta.main) {
  const check = checkMode();
  const problems = syncGeneratedFiles(kindIndexFiles(), [], check);
  reportGenerated("generate-kind-index", problems, check);
}
