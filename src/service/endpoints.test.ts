import { describe, expect, it } from "vitest";
import {
  assumed,
  checkEndpointNames,
  DEFAULT_ENDPOINTS,
  ENDPOINT_NAMES,
  type EndpointDeclarations,
  resolveEndpointTable,
} from "./endpoints.js";
import { KIND_ENDPOINT_TABLES } from "./kinds/index.js";

describe("the endpoint table", () => {
  it("starts every path with /v1 as the spec's versioning demands", () => {
    for (const name of ENDPOINT_NAMES) expect(DEFAULT_ENDPOINTS[name].path).toMatch(/^\/v1\//);
  });

  it("leaves the deletes the spec does not name disabled until configured", () => {
    const table = resolveEndpointTable();
    expect(table.deleteTrainingTask).toBeNull();
    expect(table.deleteNas).toBeNull();
    expect(table.deleteTemplate).toBeNull();
    expect(table.deleteVolume).not.toBeNull();
  });

  it("enables the referenced-but-unshown operations with their default paths", () => {
    const table = resolveEndpointTable();
    for (const name of [
      "getTrainingSubscriptionResult",
      "getNasSubscriptionResult",
      "listTrainingTasks",
      "listTemplates",
      "listPods",
      "openPodPort",
      "listNas",
      "getNas",
    ] as const) {
      expect(table[name]?.documented).toBe(false);
      expect(table[name]?.path).toBe(DEFAULT_ENDPOINTS[name].path);
    }
  });

  it("never marks a create or a scale as idempotent", () => {
    for (const name of [
      "createTrainingTask",
      "subscribeNas",
      "scaleNas",
      "createTemplate",
      "saveCciImage",
    ] as const) {
      expect(DEFAULT_ENDPOINTS[name].idempotent).toBe(false);
    }
  });

  it("takes a path override and keeps the default method", () => {
    const table = resolveEndpointTable({ getNas: "/v2/nas/{id}" });
    expect(table.getNas).toMatchObject({ method: "GET", path: "/v2/nas/{id}" });
  });

  it("takes a method and path override and enables a disabled endpoint", () => {
    const table = resolveEndpointTable({ deleteNas: "post /v1/nasStorage/instance/{id}/release" });
    expect(table.deleteNas).toMatchObject({
      method: "POST",
      path: "/v1/nasStorage/instance/{id}/release",
    });
  });

  it("disables an endpoint overridden with null", () => {
    expect(resolveEndpointTable({ listPods: null }).listPods).toBeNull();
  });

  it("refuses an unknown endpoint name, naming it", () => {
    expect(() => resolveEndpointTable({ getNass: "/x" })).toThrow(
      /unknown service endpoint "getNass"/,
    );
  });

  it.each(["v1/x", "FETCH /v1/x", "GET /v1/x extra"])(
    "refuses the malformed override %j",
    (value) => {
      expect(() => resolveEndpointTable({ getNas: value })).toThrow(/invalid override/);
    },
  );
});

describe("the kinds' own endpoints (src/service/kinds)", () => {
  it("are refused when two kinds declare the same name", () => {
    const row = assumed("GET", "/v1/x/{id}", true);
    expect(() => checkEndpointNames({ alpha: { getX: row }, beta: { getX: row } })).toThrow(
      /"getX" of src\/service\/kinds\/beta.ts is also declared by src\/service\/kinds\/alpha.ts/,
    );
  });

  it("are accepted under names of their own, and are in the default table", () => {
    expect(() =>
      checkEndpointNames({
        gadget: { getGadget: assumed("GET", "/v1/g/{id}", true) },
        widget: { listWidgets: assumed("GET", "/v1/w", true) },
      }),
    ).not.toThrow();
    const tables: Readonly<Record<string, EndpointDeclarations>> = KIND_ENDPOINT_TABLES;
    for (const [kind, table] of Object.entries(tables)) {
      for (const name of Object.keys(table)) {
        expect(ENDPOINT_NAMES, `${kind}: ${name}`).toContain(name);
      }
    }
  });
});
