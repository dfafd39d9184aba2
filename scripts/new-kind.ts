/**
 * Scaffolds a managed kind (docs/adding-a-kind.md):
 *
 *   npm run new-kind -- BlockVolume
 *
 * writes the kind's own new files (the CRD module, the controller folder with its
 * ExternalClient, decisions and their tests, the service operations and the emulator's
 * handlers of them with their settings module, a sample, an integration test skeleton that fails until it is
 * filled in) and registers the kind in the two registries, src/crds/index.ts (`allCrds`)
 * and src/controllers/index.ts (`controllers`). `npm run generate` does the rest (CRD
 * YAML, RBAC, Argo CD scripts, docs, the kind indexes). Refuses a name that is not
 * PascalCase and a kind that exists, changing nothing.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { root } from "./generated-files.js";
import { controllerModule, externalModule } from "./new-kind/controller-templates.js";
import { crdModule } from "./new-kind/crd-template.js";
import { decisionsModule, decisionsTest } from "./new-kind/decisions-templates.js";
import { type KindNames, kindNames } from "./new-kind/names.js";
import {
  emulatorModule,
  emulatorSettingsModule,
  serviceModule,
} from "./new-kind/service-templates.js";
import { integrationTest, realServiceSample, sampleManifest } from "./new-kind/test-templates.js";

/** The registry of the kinds' definitions. */
export const CRD_REGISTRY = "src/crds/index.ts";
/** The registry of the controllers. */
export const CONTROLLER_REGISTRY = "src/controllers/index.ts";

/** The new files of a kind, by path (relative to the repository root). */
export function kindFiles(n: KindNames): Map<string, string> {
  return new Map([
    [`src/crds/${n.lower}.ts`, crdModule(n)],
    [`src/controllers/${n.lower}/controller.ts`, controllerModule(n)],
    [`src/controllers/${n.lower}/external.ts`, externalModule(n)],
    [`src/controllers/${n.lower}/decisions.ts`, decisionsModule(n)],
    [`src/controllers/${n.lower}/decisions.test.ts`, decisionsTest(n)],
    [`src/service/kinds/${n.lower}.ts`, serviceModule(n)],
    [`src/emulator/kinds/${n.lower}.ts`, emulatorModule(n)],
    [`src/emulator/kinds/${n.lower}.settings.ts`, emulatorSettingsModule(n)],
    [`deploy/samples/${n.lower}.yaml`, sampleManifest(n)],
    [`deploy/samples/real-service/${n.lower}.yaml`, realServiceSample(n)],
    [`test/integration/${n.lower}.test.ts`, integrationTest(n)],
  ]);
}

/** `text` with `line` inserted before the first line matching `before`. */
function insertBefore(path: string, text: string, before: RegExp, line: string): string {
  const m = before.exec(text);
  if (!m) throw new Error(`${path}: found no line matching ${before}; register the kind by hand`);
  return `${text.slice(0, m.index)}${line}\n${text.slice(m.index)}`;
}

/** `text` with `entry` appended to the array literal `const <name>... = [ ... ];`. */
function appendToArray(path: string, text: string, name: string, entry: string): string {
  const start = text.indexOf(`export const ${name}`);
  const end = start < 0 ? -1 : text.indexOf("\n];", start);
  if (end < 0) throw new Error(`${path}: found no array ${name}; register the kind by hand`);
  return `${text.slice(0, end)}\n  ${entry},${text.slice(end)}`;
}

/** The two registries with the kind added, by path. */
export function registeredKind(n: KindNames, read: (path: string) => string): Map<string, string> {
  let crds = read(CRD_REGISTRY);
  crds = insertBefore(
    CRD_REGISTRY,
    crds,
    /^import /m,
    `import { ${n.camel}Crd } from "./${n.lower}.js";`,
  );
  crds = insertBefore(CRD_REGISTRY, crds, /^export \* from /m, `export * from "./${n.lower}.js";`);
  crds = appendToArray(CRD_REGISTRY, crds, "allCrds", `${n.camel}Crd`);
  let controllers = read(CONTROLLER_REGISTRY);
  controllers = insertBefore(
    CONTROLLER_REGISTRY,
    controllers,
    /^import /m,
    `import { ${n.camel}Controller } from "./${n.lower}/controller.js";`,
  );
  controllers = appendToArray(
    CONTROLLER_REGISTRY,
    controllers,
    "controllers",
    `${n.camel}Controller`,
  );
  return new Map([
    [CRD_REGISTRY, crds],
    [CONTROLLER_REGISTRY, controllers],
  ]);
}

/**
 * Why `n` cannot be scaffolded in the repository at `base`, or undefined: a kind of that
 * name (or plural) is registered, or one of its files exists.
 */
export function conflictOf(n: KindNames, base: string): string | undefined {
  const registry = readFileSync(join(base, CRD_REGISTRY), "utf8");
  if (new RegExp(`\\b${n.camel}Crd\\b`).test(registry)) {
    return `the kind ${n.kind} exists (${CRD_REGISTRY} registers ${n.camel}Crd)`;
  }
  for (const path of [...kindFiles(n).keys(), `src/controllers/${n.lower}`]) {
    if (existsSync(join(base, path))) return `the kind ${n.kind} exists (${path} is there)`;
  }
  return undefined;
}

/** Writes the kind into the repository at `base`; returns the paths written. */
export function scaffoldKind(kind: string, base = root): string[] {
  const n = kindNames(kind);
  const conflict = conflictOf(n, base);
  if (conflict) throw new Error(`${conflict}; nothing written`);
  const files = new Map([
    ...kindFiles(n),
    ...registeredKind(n, (p) => readFileSync(join(base, p), "utf8")),
  ]);
  for (const [path, content] of files) {
    mkdirSync(dirname(join(base, path)), { recursive: true });
    writeFileSync(join(base, path), content);
  }
  const sources = [...files.keys()].filter((p) => p.endsWith(".ts"));
  execFileSync(join(base, "node_modules/.bin/biome"), ["check", "--write", ...sources], {
    cwd: base,
    stdio: "inherit",
  });
  return [...files.keys()];
}

if (import.meta.main) {
  const [kind, ...rest] = process.argv.slice(2);
  if (!kind || rest.length > 0) {
    console.error("usage: npm run new-kind -- <Kind>   (PascalCase, e.g. BlockVolume)");
    process.exit(2);
  }
  try {
    for (const path of scaffoldKind(kind)) console.log(`wrote ${path}`);
    console.log(
      `\nNext: npm run generate (CRDs, RBAC, Argo CD, docs, kind indexes), then the TODO(${kind}) marks and docs/adding-a-kind.md.`,
    );
  } catch (err) {
    console.error(`new-kind: ${(err as Error).message}`);
    process.exit(1);
  }
}
