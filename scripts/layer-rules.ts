/**
 * The layer rules of src/ (docs/architecture.md) and the check of one module against its layer's
 * rule, run by check-layers.ts over every module (`npm run lint`).
 */
import { relative, resolve, sep } from "node:path";
import { importSpecifiers } from "./import-specifiers.js";

/** What one top-level folder of src/ may not import. */
export interface Rule {
  /** Top-level folder under src/ the rule applies to. */
  layer: string;
  /** Folders under src/ it must not import. */
  forbiddenLayers: string[];
  /** Packages it must not import. */
  forbiddenPackages: string[];
  /** When set, the only packages it may import (node: builtins included in the check). */
  onlyPackages?: string[];
}

/** The rule of each layer that has one. */
export const LAYER_RULES: readonly Rule[] = [
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

/**
 * The violations of `rule` by the module `file` (absolute path, under `root`/src) whose
 * source is `text`, one line each; every import counts, side-effect and dynamic ones
 * included (import-specifiers.ts).
 */
export function layerViolations(rule: Rule, file: string, text: string, root: string): string[] {
  const src = resolve(root, "src");
  const where = relative(root, file);
  const violations: string[] = [];
  for (const spec of importSpecifiers(text)) {
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
  return violations;
}
