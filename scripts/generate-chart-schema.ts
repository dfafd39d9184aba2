/**
 * Writes the schema of the chart's `config` value (overrides merged into the operator's
 * config file) into charts/aidc-operator/values.schema.json, from the operator's zod
 * config schema (src/config/schema.ts): one source of truth, so that `helm install`
 * refuses an unknown key or a wrong value under `config` (e.g. `config.log.level:
 * verbose`), naming it, instead of a pod that stops at start. The rest of
 * values.schema.json is written by hand and kept as it is. `--check` fails when the
 * file is stale.
 *
 *   tsx scripts/generate-chart-schema.ts [--check]
 *
 * What the zod schema checks beyond one field (refinements such as lease durations that
 * must decrease, or an http base URL that needs allowInsecureHttp) cannot be expressed
 * here: the operator still checks them at start.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import { operatorConfigSchema } from "../src/config/schema.js";
import { checkMode, reportGenerated, root, syncGeneratedFiles } from "./generated-files.js";

/** The chart's values schema. */
export const VALUES_SCHEMA = "charts/aidc-operator/values.schema.json";

type JsonSchema = { [key: string]: unknown };

/**
 * Every field optional, no defaults: `config` holds overrides, merged over what the chart
 * writes (the base URL, for one, may come from the value `service.baseUrl`).
 */
function asOverrides(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(asOverrides);
  if (!node || typeof node !== "object") return node;
  const out: JsonSchema = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === "required" || key === "default" || key === "$schema") continue;
    out[key] = asOverrides(value);
  }
  return out;
}

/** The schema of `config`, from the operator's config schema. */
export function configValueSchema(): JsonSchema {
  const generated = z.toJSONSchema(operatorConfigSchema, { io: "input", target: "draft-7" });
  return {
    description:
      "Overrides of the operator config, merged over what the chart writes. Generated from src/config/schema.ts by scripts/generate-chart-schema.ts (npm run generate): do not edit.",
    ...(asOverrides(generated) as JsonSchema),
  };
}

/** values.schema.json with `properties.config` generated. */
export function valuesSchemaText(current: string): string {
  const schema = JSON.parse(current) as { properties: JsonSchema };
  schema.properties.config = configValueSchema();
  return `${JSON.stringify(schema, null, 2)}\n`;
}

if (import.meta.main) {
  const check = checkMode();
  const current = readFileSync(join(root, VALUES_SCHEMA), "utf8");
  const problems = syncGeneratedFiles(
    new Map([[VALUES_SCHEMA, valuesSchemaText(current)]]),
    [],
    check,
  );
  reportGenerated("generate-chart-schema", problems, check);
}
