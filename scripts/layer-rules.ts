/**
 * The layer rules of src/ and the check of one module against its layer's rule, run by
 * check-layers.ts over every module (`npm run lint`). The layers, bottom up: crds and
 * runtime (no domain client), service (the client of the Compute and Storage Service),
 * controllers, cli; the emulator stands beside the service and shares with it only the
 * wire (docs/architecture.md).
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
  /**
   * Per folder under src/ it imports, the only modules of it allowed (their paths
   * inside that folder): what the layer may share with it and nothing more.
   */
  onlyModules?: Readonly<Record<string, RegExp>>;
}

/**
 * What the emulator may take from src/service: the wire (request and response shapes,
 * ids and timestamps: schemas/, and a kind's own in its module of kinds/, or a part of
 * it `<kind>.<part>.ts`, with its endpoint rows), the endpoint table that routes it, and the client its test harness
 * (harness.ts) hands out. Never the operator's own rules (they live in src/controllers,
 * e.g. the NAS capacity rule of controllers/nasvolume/decisions.ts, or in service modules
 * outside this list): the emulator reads the spec on its own, so that a misreading on
 * either side shows as a failing test instead of agreeing with itself.
 */
export const EMULATOR_SERVICE_MODULES =
  /^(schemas\/[a-z0-9-]+|kinds\/[a-z0-9]+(\.[a-z0-9-]+)?|endpoints|client)\.ts$/;

/**
 * What the service may take from src/runtime: the SOCKS5 tunnels its calls open as the
 * API server's connections do, and the error of a proxy they cannot reach. Nothing
 * else: the service knows no informer, cache or Kubernetes client.
 */
export const SERVICE_RUNTIME_MODULES = /^(socks-tunnel|proxy-errors)\.ts$/;

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
    forbiddenLayers: ["controllers", "emulator", "cli", "crds"],
    forbiddenPackages: [],
    onlyModules: { runtime: SERVICE_RUNTIME_MODULES },
  },
  {
    layer: "emulator",
    forbiddenLayers: ["controllers", "runtime", "cli", "crds"],
    forbiddenPackages: ["node-fetch"],
    onlyModules: { service: EMULATOR_SERVICE_MODULES },
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
      const [target = "", ...rest] = relative(src, resolve(file, "..", spec)).split(sep);
      if (rule.forbiddenLayers.includes(target)) {
        violations.push(`${where}: src/${rule.layer} must not import src/${target} (${spec})`);
      }
      const only = rule.onlyModules?.[target];
      const module = rest.join("/").replace(/\.js$/, ".ts");
      if (only && target !== rule.layer && !only.test(module)) {
        violations.push(
          `${where}: src/${rule.layer} may import of src/${target} only ${only.source} (found ${spec})`,
        );
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
