import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { documentedValues } from "../../scripts/generate-chart-docs.js";
import { root } from "../../scripts/generated-files.js";

/** The chart's values, their documentation and their schema agree. */

const valuesText = readFileSync(join(root, "charts/aidc-operator/values.yaml"), "utf8");
const values = parse(valuesText) as Record<string, unknown>;
const schema = JSON.parse(
  readFileSync(join(root, "charts/aidc-operator/values.schema.json"), "utf8"),
) as { properties: Record<string, { properties?: Record<string, unknown> }> };

/** Dotted paths of every leaf value (empty maps and lists count as leaves). */
function leaves(value: unknown, prefix = ""): string[] {
  if (
    value &&
    typeof value === "object" &&
    !Array.isArray(value) &&
    Object.keys(value).length > 0
  ) {
    return Object.entries(value).flatMap(([k, v]) => leaves(v, prefix ? `${prefix}.${k}` : k));
  }
  return [prefix];
}

describe("the chart's values", () => {
  it("are each documented by a `# --` comment on the value or a parent", () => {
    const documented = documentedValues(valuesText).map((v) => v.key);
    const undocumented = leaves(values).filter(
      (leaf) => !documented.some((d) => leaf === d || leaf.startsWith(`${d}.`)),
    );
    expect(undocumented).toEqual([]);
  });

  it("are each declared in values.schema.json, and the schema declares no other top-level key", () => {
    expect(Object.keys(schema.properties).sort()).toEqual(Object.keys(values).sort());
    for (const [key, value] of Object.entries(values)) {
      const declared = schema.properties[key]?.properties;
      if (!declared || !value || typeof value !== "object" || Array.isArray(value)) continue;
      for (const child of Object.keys(value)) {
        expect(Object.keys(declared), `${key}.${child}`).toContain(child);
      }
    }
  });

  it("read documentation across comment lines and take defaults from the values", () => {
    const doc = documentedValues(
      ["a:", "  # -- first line", "  # second line", "  b: 3", "# -- top", "c: [1]", ""].join("\n"),
    );
    expect(doc).toEqual([
      { key: "a.b", description: "first line second line", default: "3" },
      { key: "c", description: "top", default: "[1]" },
    ]);
  });
});
