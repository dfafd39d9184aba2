/**
 * Enforces the layering of src/ (DESIGN §3): a layer may import only what its rule
 * allows, and no module may import itself through others (an import cycle, see
 * import-cycles.ts). Run by `npm run lint`; exits 1 with one line per violation.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative, resolve, sep } from "node:path";
import { findImportCycles, importGraphOf } from "./import-cycles.js";

const root = resolve(import.meta.dirname, "..");
const src = join(root, "src");

interface Rule {
  /** Top-level folder under src/ the rule applies to. */
  layer: string;
  /** Folders under src/ it must not import. */
  forbiddenLayers: string[];
  /** Packages it must not import. */
  forbiddenPackages: string[];
  /** When set, the only packages it may import (node: builtins included in the check). */
  onlyPackages?: string[];
}

const rules: Rule[] = [
  {
    layer: "runtime",
    forbiddenLayers: ["controllers", "crds", "service", "emulator", "cli"],
    forbiddenPackages: ["node-fetch"],
  },
  {
    layer: "crds",
    forbiddenLayers: ["controllers", "runtime", "service", "emulator", "cli"],
    forbiddenPackages: [],
    onlyPackages: ["zod"],
  },
  { layer: "controllers", forbiddenLayers: ["emulator", "cli"], forbiddenPackages: ["node-fetch"] },
  {
    layer: "service",
    forbiddenLayers: ["controllers", "runtime", "emulator", "cli", "crds"],
    forbiddenPackages: [],
  },
  {
    layer: "emulator",
    forbiddenLayers: ["controllers", "runtime", "cli", "crds"],
    forbiddenPackages: ["node-fetch"],
  },
];

function* files(dir: string): Generator<string> {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) yield* files(path);
    else if (path.endsWith(".ts") && !path.endsWith(".test.ts")) yield path;
  }
}

const importRe =
  /(?:^|\n)\s*(?:import|export)\s[^'"]*?from\s+["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)/g;
const violations: string[] = [];

for (const rule of rules) {
  const dir = join(src, rule.layer);
  try {
    statSync(dir);
  } catch {
    continue;
  }
  for (const file of files(dir)) {
    const text = readFileSync(file, "utf8");
    for (const m of text.matchAll(importRe)) {
      const spec = m[1] ?? m[2] ?? "";
      const where = relative(root, file);
      if (spec.startsWith(".")) {
        const target = relative(src, resolve(file, "..", spec)).split(sep)[0] ?? "";
        if (rule.forbiddenLayers.includes(target)) {
          violations.push(`${where}: src/${rule.layer} must not import src/${target} (${spec})`);
        }
        continue;
      }
      const pkg = spec.startsWith("@")
        ? spec.split("/").slice(0, 2).join("/")
        : (spec.split("/")[0] ?? "");
      if (rule.forbiddenPackages.includes(pkg)) {
        violations.push(`${where}: src/${rule.layer} must not import ${pkg}`);
      }
      if (rule.onlyPackages && !rule.onlyPackages.includes(pkg)) {
        violations.push(
          `${where}: src/${rule.layer} may import only ${rule.onlyPackages.join(", ")} (found ${spec})`,
        );
      }
    }
  }
}

const cycles = findImportCycles(importGraphOf([...files(src)], root));
for (const cycle of cycles) violations.push(`import cycle: ${cycle.join(" -> ")}`);

if (violations.length > 0) {
  for (const v of violations) console.error(v);
  process.exit(1);
}
console.log("layers: ok");
