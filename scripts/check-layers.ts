/**
 * Enforces the layering of src/ (docs/architecture.md): a layer may import only what its rule
 * allows (layer-rules.ts), and no module may import itself through others (an import
 * cycle, see import-cycles.ts). Run by `npm run lint`; exits 1 with one line per violation.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { findImportCycles, importGraphOf } from "./import-cycles.js";
import { LAYER_RULES, layerViolations } from "./layer-rules.js";

const root = resolve(import.meta.dirname, "..");
const src = join(root, "src");

function* files(dir: string): Generator<string> {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) yield* files(path);
    else if (path.endsWith(".ts") && !path.endsWith(".test.ts")) yield path;
  }
}

const violations: string[] = [];
for (const rule of LAYER_RULES) {
  const dir = join(src, rule.layer);
  try {
    statSync(dir);
  } catch {
    continue;
  }
  for (const file of files(dir)) {
    violations.push(...layerViolations(rule, file, readFileSync(file, "utf8"), root));
  }
}

const cycles = findImportCycles(importGraphOf([...files(src)], root));
for (const cycle of cycles) violations.push(`import cycle: ${cycle.join(" -> ")}`);

if (violations.length > 0) {
  for (const v of violations) console.error(v);
  process.exit(1);
}
console.log("layers: ok");
