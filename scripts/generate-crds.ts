/**
 * Writes the files generated from src/crds (CRD YAML in deploy/crds and
 * charts/aidc-operator/crds, deploy/crds/kustomization.yaml, docs/crds.md).
 *
 *   tsx scripts/generate-crds.ts           write them (`npm run generate`)
 *   tsx scripts/generate-crds.ts --check   exit 1 naming each stale or missing file
 *                                          (`npm run check:generated`)
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { generatedFiles } from "../src/cli/crds.js";

const root = resolve(import.meta.dirname, "..");
const check = process.argv.includes("--check");
const stale: string[] = [];

for (const [path, content] of generatedFiles()) {
  const file = join(root, path);
  const current = existsSync(file) ? readFileSync(file, "utf8") : undefined;
  if (current === content) continue;
  if (check) {
    stale.push(`${path}: ${current === undefined ? "missing" : "stale"}`);
    continue;
  }
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, content);
  console.log(`wrote ${path}`);
}

if (stale.length > 0) {
  for (const line of stale) console.error(line);
  console.error(
    "generated files differ from src/crds: run `npm run generate` and commit the result",
  );
  process.exit(1);
}
if (check) console.log("generated files: up to date");
