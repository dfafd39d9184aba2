/**
 * The fragments the kinds share (columns.ts, status-fields.ts, the spec builders of
 * fields.ts and the rule builders of mutability.ts): what each one renders, so that a
 * kind built from them gets the same column, field or rule as one written out.
 */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ageColumn, kindColumns, phaseColumn, serviceIdColumn, statusColumn } from "./columns.js";
import {
  adoptedId,
  cciInstanceTarget,
  computeCenterId,
  INTEGER_LIMITS,
  serviceName,
} from "./fields.js";
import { adoptedIdRule, mutabilityRules, sameRuleFor } from "./mutability.js";
import { externalIdStatus, kindStatus, subscriptionStatusShape } from "./status-fields.js";

/** The description a field gets in the JSON schema (that of an optional field's inner schema). */
function descriptionOf(field: z.ZodType): string | undefined {
  const json = z.toJSONSchema(z.object({ field })) as {
    properties: Record<string, { description?: string }>;
  };
  return json.properties.field?.description;
}

describe("kindColumns", () => {
  it("puts the kind's columns first, then READY, SYNCED, REASON and AGE, then the wide ones at priority 1", () => {
    const columns = kindColumns({
      shown: [phaseColumn("gizmo")],
      readyMeaning: "Whether the gizmo is usable",
      wide: [serviceIdColumn("Gizmo-ID", "gizmoId", "gizmo")],
    });
    expect(columns.map((c) => [c.name, c.priority])).toEqual([
      ["Phase", undefined],
      ["Ready", undefined],
      ["Synced", undefined],
      ["Reason", undefined],
      ["Age", undefined],
      ["Gizmo-ID", 1],
    ]);
    expect(columns[0]).toEqual({
      name: "Phase",
      type: "string",
      jsonPath: ".status.phase",
      description: "Phase of the gizmo.",
    });
    expect(columns[1]?.description).toBe("Whether the gizmo is usable (the Ready condition).");
    expect(columns.at(-1)).toEqual({
      name: "Gizmo-ID",
      type: "string",
      jsonPath: ".status.gizmoId",
      description: "Id of the gizmo in the service.",
      priority: 1,
    });
  });

  it("gives each kind its own AGE column, so that no kind can change another's", () => {
    const a = kindColumns({ shown: [], readyMeaning: "a" });
    const b = kindColumns({ shown: [statusColumn("X", "integer", "x", "X.")], readyMeaning: "b" });
    expect(a.at(-1)).toEqual(ageColumn);
    expect(a.at(-1)).not.toBe(b.at(-1));
    expect(a.at(-1)).not.toBe(ageColumn);
  });
});

describe("kindStatus", () => {
  it("starts with observedGeneration and conditions, then the kind's fields, all optional", () => {
    const status = kindStatus("the gizmo", {
      gizmoId: externalIdStatus("gizmo"),
      ...subscriptionStatusShape("create subscription"),
    });
    expect(Object.keys(status.shape)).toEqual([
      "observedGeneration",
      "conditions",
      "gizmoId",
      "subscriptionKey",
      "subscription",
    ]);
    expect(status.meta()?.description).toBe(
      "Observed state of the gizmo, written by the operator.",
    );
    expect(status.parse({})).toEqual({});
    const json = z.toJSONSchema(status) as { properties: Record<string, { description?: string }> };
    expect(json.properties.gizmoId?.description).toBe(
      "Id of the gizmo in the service; also in the annotation aidc.io/external-id.",
    );
    expect(json.properties.subscriptionKey?.description).toBe(
      "Result key of the create subscription; also in the annotation aidc.io/subscription-key.",
    );
  });
});

describe("spec builders", () => {
  it("say in the name's description whether it is immutable", () => {
    expect(descriptionOf(serviceName("gizmo", { immutable: true }))).toBe(
      "Name of the gizmo in the service; metadata.name when omitted. Immutable.",
    );
    expect(descriptionOf(serviceName("gizmo", { immutable: false }))).toBe(
      "Name of the gizmo in the service; metadata.name when omitted.",
    );
  });

  it("bound a compute center id to 0 .. INTEGER_LIMITS.id and say so", () => {
    const aidcId = computeCenterId("Compute center of the gizmo", ". Immutable.");
    expect(descriptionOf(aidcId)).toBe(
      `Compute center of the gizmo (0 to ${INTEGER_LIMITS.id}). Immutable.`,
    );
    expect(aidcId.safeParse(INTEGER_LIMITS.id + 1).success).toBe(false);
    expect(aidcId.safeParse(-1).success).toBe(false);
  });

  it("refuse a malformed adopted id", () => {
    expect(adoptedId("gizmo").safeParse("../x").success).toBe(false);
    expect(adoptedId("gizmo").safeParse("gz-1").success).toBe(true);
  });

  it("ask for exactly one of cciInstanceRef and instanceId in an instance target", () => {
    const target = cciInstanceTarget({ description: "d", ref: "r", id: "i", message: "m" });
    expect(target.meta()?.["x-kubernetes-validations"]).toEqual([
      { rule: "has(self.cciInstanceRef) != has(self.instanceId)", message: "m" },
    ]);
    expect(Object.keys(target.shape)).toEqual(["cciInstanceRef", "instanceId"]);
  });
});

describe("rule builders", () => {
  it("give each field the same rule, and an adopted id a set-once rule of the operator", () => {
    const rules = [
      ...sameRuleFor(["name", "size"], { mutability: "immutable", owner: "service", why: "w" }),
      adoptedIdRule("gizmoId", "it binds the object"),
    ];
    expect(rules).toEqual([
      { field: "name", mutability: "immutable", owner: "service", why: "w" },
      { field: "size", mutability: "immutable", owner: "service", why: "w" },
      { field: "gizmoId", mutability: "setOnce", owner: "operator", why: "it binds the object" },
    ]);
    expect(mutabilityRules(rules).at(-1)?.message).toBe(
      "gizmoId is immutable once set (a rule of the operator): it binds the object",
    );
  });
});
