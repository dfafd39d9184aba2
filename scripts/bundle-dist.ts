/**
 * The second step of `npm run build`: bundles the compiled production CLI
 * (`<outDir>/cli/main.js`, tsc's output) and the libraries it loads at start into
 * `<outDir>/bundle/` (esbuild, ES modules, whitespace and syntax minified, names kept).
 * That bundle is what the image runs and all it carries of dist/ (package.json `bin`,
 * the Dockerfile, `npm run bench -- --compiled`); the emulator, the local control plane
 * and the playground are not in it (src/cli/repo-main.ts is their entry).
 *
 * Why a bundle: `run` holds ~10 MiB less at readiness than from tsc's separate modules
 * (docs/performance.md). What the CLI imports on demand (the S3 client's module)
 * becomes a chunk of its own, still loaded only when used; the libraries loaded only
 * then (`LOADED_FROM_NODE_MODULES`) stay in node_modules, which the image keeps.
 *
 *   tsx scripts/bundle-dist.ts [outDir]      # default dist
 */
import { execFileSync } from "node:child_process";
import { readFileSync, rmSync } from "node:fs";
import { builtinModules } from "node:module";
import { dirname, join, resolve } from "node:path";
import { type BuildOptions, build, type Plugin } from "esbuild";

const root = resolve(import.meta.dirname, "..");

/**
 * Imported only on demand (dynamic import): left to node_modules rather than bundled,
 * as they would load anyway only when needed; the first two are big, socks-proxy-agent
 * (a socks5 proxy's tunnels) loads `debug`, whose optional `supports-color` a bundle
 * cannot resolve.
 */
export const LOADED_FROM_NODE_MODULES = [
  "@kubernetes/client-node",
  "@aws-sdk/*",
  "socks-proxy-agent",
] as const;

/** The bundle's directory under an outDir, and its entry (relative to the outDir). */
export const BUNDLE_ENTRY = "bundle/main.js";

/** Bundles `<outDir>/cli/main.js` into `<outDir>/bundle/` (replacing what was there). */
export async function bundleDist(outDir = join(root, "dist")): Promise<void> {
  const dir = join(outDir, "bundle");
  rmSync(dir, { recursive: true, force: true });
  await build(bundleOptions(join(outDir, "cli", "main.js"), dir));
}

/**
 * Libraries the CLI loads at start that become files of their own (`vendor/<name>.js`
 * and the chunk it shares with main.js), so that no file of the bundle is big: V8
 * parses a module in one go, and the memory that takes stays with the process (RSS at
 * readiness grows ~5 MiB per MB of the largest file; test/unit/bundle.test.ts holds
 * every file under {@link BUNDLE_FILE_MAX_BYTES}).
 */
export const SEPARATE_LIBRARIES = ["zod", "yaml", "prom-client", "commander", "pino"] as const;

/** The largest a file of the bundle may be (bytes). */
export const BUNDLE_FILE_MAX_BYTES = 700_000;

/** How the production CLI `entry` is bundled into `outdir` (also from src/, for tests). */
export function bundleOptions(entry: string, outdir: string): BuildOptions {
  return {
    entryPoints: [
      entry,
      ...SEPARATE_LIBRARIES.map((name) => ({ in: name, out: `vendor/${name}` })),
    ],
    outdir,
    bundle: true,
    splitting: true,
    format: "esm",
    platform: "node",
    target: "node22",
    minifyWhitespace: true,
    minifySyntax: true,
    // Error classes keep their names in logs (`err.type`) where bundling renames one.
    keepNames: true,
    sourcemap: true,
    external: [...LOADED_FROM_NODE_MODULES],
    // The commit in the User-Agent the operator sends (src/runtime/user-agent.ts).
    define: { __AIDC_GIT_SHA__: JSON.stringify(gitSha()) },
    plugins: [builtinsThroughRequire],
    // The CommonJS libraries bundled (pino, prom-client, ...) and builtinsThroughRequire
    // require Node's built-in modules; an ES module has no `require` of its own.
    banner: {
      js: "const require = process.getBuiltinModule('node:module').createRequire(import.meta.url);",
    },
    logLevel: "warning",
  };
}

/** `$AIDC_GIT_SHA` (an image build without .git), else the checkout's commit, else "unknown". */
function gitSha(): string {
  if (process.env.AIDC_GIT_SHA) return process.env.AIDC_GIT_SHA;
  try {
    return execFileSync("git", ["rev-parse", "--short=12", "HEAD"], {
      cwd: root,
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
    }).trim();
  } catch {
    return "unknown";
  }
}

/**
 * Every static or dynamic `import` of a Node built-in module becomes a `require`: an
 * ES module import of a built-in builds its ES module facade, which reads every export,
 * getters included, and `node:http`'s getters (`WebSocket`, `MessageEvent`,
 * `CloseEvent`) load Node's own copy of undici: ~7 MiB of heap and ~10 MiB of the
 * binary's pages for a client `run` never uses (fetch stays lazy). `tls`'s
 * `rootCertificates` and `crypto`'s `webcrypto` are read the same way.
 */
const builtinsThroughRequire: Plugin = {
  name: "builtins-through-require",
  setup(b) {
    const builtins = new Set(builtinModules);
    b.onResolve({ filter: /^[a-z0-9_:/]+$/ }, (args) => {
      if (args.kind !== "import-statement" && args.kind !== "dynamic-import") return undefined;
      const name = args.path.replace(/^node:/, "");
      return builtins.has(name) ? { path: name, namespace: "builtin-require" } : undefined;
    });
    b.onLoad({ filter: /.*/, namespace: "builtin-require" }, (args) => ({
      contents: `module.exports = require("node:${args.path}");`,
      loader: "js",
    }));
  },
};

/**
 * What loading a bundle file loads with it: the file, the chunks it imports statically
 * (transitively), and the packages those import (`bare`), dynamic imports left out.
 */
export function staticClosure(file: string): { files: string[]; bare: string[] } {
  const files = new Set<string>();
  const bare = new Set<string>();
  const todo = [file];
  while (todo.length > 0) {
    const f = todo.pop() as string;
    if (files.has(f)) continue;
    files.add(f);
    // `import{a as b}from"./chunk-X.js"`, `import"./chunk-Y.js"`, `export{...}from"..."`;
    // never `import("...")`, which loads on demand.
    const text = readFileSync(f, "utf8");
    for (const m of text.matchAll(
      /(?:^|[;\s])(?:import|export)\s*(?:[^"'();]*?from\s*)?["']([^"']+)["']/g,
    )) {
      const spec = m[1] as string;
      if (spec.startsWith(".")) todo.push(join(dirname(f), spec));
      else bare.add(spec);
    }
  }
  return { files: [...files], bare: [...bare] };
}

if (import.meta.filename === process.argv[1]) {
  await bundleDist(process.argv[2] ? resolve(process.argv[2]) : undefined);
}
