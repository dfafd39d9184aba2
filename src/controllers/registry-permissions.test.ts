import { afterAll, describe, expect, it } from "vitest";
import { operatorConfigSchema } from "../config/schema.js";
import type { ControllerDefinition } from "../runtime/controller.js";
import { createLogger } from "../runtime/logging.js";
import {
  mergeRules,
  missingPermissions,
  type PolicyRule,
  RUNTIME_PERMISSIONS,
} from "../runtime/permissions.js";
import { ServiceClient } from "../service/client.js";
import { controllers } from "./index.js";
import { policyRules } from "./permissions.js";

/**
 * The RBAC the chart grants (operatorPermissions, scope `watched`) covers what every
 * controller registered in src/controllers/index.ts says it needs, and what its
 * informers need (list and watch of its primary kind and of every watched kind). A
 * controller that declares a new rule without adding it to permissions.ts fails here,
 * before the e2e test that runs the operator as the chart's ServiceAccount.
 */

const service = new ServiceClient({
  baseUrl: "http://127.0.0.1:9",
  apiKey: () => "unit-test-key",
  rateLimit: null,
});
/** The registered controllers, built from the operator config `config`. */
function definitionsFor(config: Record<string, unknown> = {}): ControllerDefinition[] {
  return controllers.map((factory) =>
    factory({
      config: operatorConfigSchema.parse({
        service: { baseUrl: "https://aidc.invalid" },
        ...config,
      }),
      service,
      log: createLogger({ level: "silent" }),
    }),
  );
}
const definitions = definitionsFor();
const exposing = definitionsFor({ trainingJob: { exposure: { enabled: true } } });

/** The rules of `defs` that touch Services or EndpointSlices. */
function exposureRules(defs: ControllerDefinition[]): PolicyRule[] {
  return defs
    .flatMap((d) => d.permissions)
    .filter((r) => r.resources.some((x) => x === "services" || x === "endpointslices"));
}
afterAll(() => service.close());

/** What the informers of a controller do: list and watch each kind they cache. */
function informerRules(def: ControllerDefinition): PolicyRule[] {
  return [def.primary, ...def.watches.map((w) => w.resource)].map((r) => ({
    apiGroups: [r.group],
    resources: [r.plural],
    verbs: ["list", "watch"],
  }));
}

describe("the registered controllers' permissions", () => {
  it("registers the four controllers, each with declared rules", () => {
    expect(definitions.map((d) => d.name).sort()).toEqual([
      "cciinstance",
      "nasvolume",
      "trainingjob",
      "trainingtemplate",
    ]);
    for (const def of definitions) expect(def.permissions.length, def.name).toBeGreaterThan(0);
  });

  it.each(definitions.map((d) => [d.name, d] as const))(
    "covers every rule the %s controller declares",
    (name, def) => {
      expect(missingPermissions(def.permissions, policyRules("watched")), name).toEqual([]);
    },
  );

  it("covers what each controller's informers list and watch, and declares it too", () => {
    for (const def of definitions) {
      expect(missingPermissions(informerRules(def), policyRules("watched")), def.name).toEqual([]);
      expect(missingPermissions(informerRules(def), def.permissions), def.name).toEqual([]);
    }
  });

  it("covers all of them merged with the runtime's, as Manager.permissions() reports them", () => {
    const all = mergeRules(RUNTIME_PERMISSIONS, ...definitions.map((d) => d.permissions));
    expect(all.length).toBeGreaterThan(10);
    expect(missingPermissions(all, policyRules("watched"))).toEqual([]);
  });

  it("declares Services and EndpointSlices only with exposure on, and the chart grants them then", () => {
    expect(exposureRules(definitions)).toEqual([]);
    expect(exposureRules(exposing).length).toBe(2);
    const all = mergeRules(RUNTIME_PERMISSIONS, ...exposing.map((d) => d.permissions));
    expect(missingPermissions(all, policyRules("watched", { exposure: true }))).toEqual([]);
    // Without the feature the chart's rules would not cover the exposing controller.
    expect(missingPermissions(all, policyRules("watched")).length).toBeGreaterThan(0);
  });

  it("fails when a declared rule is not granted", () => {
    const extra: PolicyRule = { apiGroups: [""], resources: ["configmaps"], verbs: ["get"] };
    expect(missingPermissions([extra], policyRules("watched"))).toEqual([extra]);
  });
});
