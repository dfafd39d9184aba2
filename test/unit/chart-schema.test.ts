import { describe, expect, it } from "vitest";
import { z } from "zod";
import { asOverrides } from "../../scripts/generate-chart-schema.js";

/** The schema of the chart's `config` value (scripts/generate-chart-schema.ts). */

const jsonSchema = (schema: z.ZodType) =>
  asOverrides(z.toJSONSchema(schema, { io: "input", target: "draft-7" })) as Record<
    string,
    unknown
  >;

describe("asOverrides, the config schema as optional overrides", () => {
  it("drops the default and required keywords at every depth", () => {
    const schema = jsonSchema(
      z.strictObject({
        level: z.enum(["info", "warn"]).default("info"),
        retry: z.strictObject({ maxAttempts: z.number().default(4) }).prefault({}),
        list: z.array(z.strictObject({ name: z.string() })).default([]),
        either: z.union([z.strictObject({ a: z.string() }), z.number().default(1)]).optional(),
      }),
    );
    expect(JSON.stringify(schema)).not.toMatch(/"default"|"required"|"\$schema"/);
  });

  it("keeps config keys named default or required, and keyword-like values", () => {
    const schema = jsonSchema(
      z.strictObject({
        default: z.number().default(1),
        required: z.strictObject({ required: z.string(), default: z.boolean() }),
        names: z.array(z.strictObject({ default: z.string() })),
        mode: z.enum(["default", "required"]),
      }),
    );
    expect(schema).toEqual({
      type: "object",
      properties: {
        default: { type: "number" },
        required: {
          type: "object",
          properties: { required: { type: "string" }, default: { type: "boolean" } },
          additionalProperties: false,
        },
        names: {
          type: "array",
          items: {
            type: "object",
            properties: { default: { type: "string" } },
            additionalProperties: false,
          },
        },
        mode: { type: "string", enum: ["default", "required"] },
      },
      additionalProperties: false,
    });
  });
});

describe("asOverrides, maps keyed by a fixed list of names", () => {
  it("turns a partialRecord of an enum into those properties, every other name refused", () => {
    const schema = jsonSchema(
      z.strictObject({
        endpoints: z.partialRecord(z.enum(["getNas", "deleteNas"]), z.string().nullable()),
        labels: z.record(z.string(), z.string()),
      }),
    );
    const value = { type: ["string", "null"] };
    expect(schema.properties).toEqual({
      endpoints: {
        type: "object",
        properties: { getNas: value, deleteNas: value },
        additionalProperties: false,
      },
      labels: {
        type: "object",
        propertyNames: { type: "string" },
        additionalProperties: { type: "string" },
      },
    });
  });
});
