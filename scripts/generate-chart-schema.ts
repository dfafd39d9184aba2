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

/** Keywords dropped from every schema node: `config` holds overrides, see {@link asOverrides}. */
const DROPPED_KEYWORDS = new Set(["required", "default", "$schema"]);
/** Keywords whose value is one schema. */
const SCHEMA_KEYWORDS = new Set([
  "additionalProperties",
  "items",
  "additionalItems",
  "contains",
  "propertyNames",
  "not",
  "if",
  "then",
  "else",
]);
/** Keywords whose value is a list of schemas. */
const SCHEMA_LIST_KEYWORDS = new Set(["allOf", "anyOf", "oneOf", "items"]);
/** Keywords whose value maps names (not keywords) to schemas. */
const SCHEMA_MAP_KEYWORDS = new Set(["properties", "patternProperties", "definitions", "$defs"]);

/**
 * Every field optional, no defaults: `config` holds overrides, merged over what the chart
 * writes (the base URL, for one, may come from the value `service.baseUrl`). Only the
 * keywords of schema nodes are dropped: a config key named `default` or `required` (a
 * name under `properties`) and the values of `enum`, `const` or `examples` stay.
 */
export function asOverrides(schema: unknown): unknown {
  if (typeof schema !== "object" || schema === null || Array.isArray(schema)) return schema;
  const out: JsonSchema = {};
  for (const [keyword, value] of Object.entries(schema)) {
    if (DROPPED_KEYWORDS.has(keyword)) continue;
    if (SCHEMA_LIST_KEYWORDS.has(keyword) && Array.isArray(value)) {
      out[keyword] = value.map(asOverrides);
    } else if (SCHEMA_KEYWORDS.has(keyword)) {
      out[keyword] = asOverrides(value);
    } else if (SCHEMA_MAP_KEYWORDS.has(keyword) && value && typeof value === "object") {
      out[keyword] = Object.fromEntries(
        Object.entries(value).map(([name, sub]) => [name, asOverrides(sub)]),
      );
    } else {
      out[keyword] = value;
    }
  }
  return closedNames(out);
}

/**
 * A map whose keys are a fixed list (zod's `partialRecord` of an enum: `propertyNames`
 * with an `enum`) as an object of those properties, every other one refused. Helm's
 * validator reports a name outside `propertyNames` at a wrong path; an unknown property
 * it reports where it is: `at '/config/service/endpoints': additional properties 'x'`.
 */
function closedNames(node: JsonSchema): JsonSchema {
  const names = (node.propertyNames as JsonSchema | undefined)?.enum;
  const value = node.additionalProperties;
  if (!Array.isArray(names) || typeof value !== "object" || value === null) return node;
  const { propertyNames: _names, additionalProperties: _value, ...rest } = node;
  return {
    ...rest,
    properties: Object.fromEntries(names.map((name) => [String(name), value])),
    additionalProperties: false,
  };
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
