import { afterAll, describe, expect, it } from "vitest";
import { operatorConfigSchema } from "../config/schema.js";
import type { ControllerDefinition } from "../runtime/controller.js";
import { createLogger } from "../runtime/logging.js";
import { looksSettled } from "../runtime/looks-settled.js";
import type { KubeObject } from "../runtime/resource.js";
import { ServiceClient } from "../service/client.js";
import { ServiceConnections } from "./connections/registry.js";
import { controllers } from "./index.js";
import { ANNOTATIONS } from "./managed/decisions.js";

/**
 * Every registered managed kind tells a settled object (routine polls only, the low
 * lane after a restart or a resync) the way the managed loop does (`managedSettled`),
 * not by the runtime's default (Ready=True for its generation): an object whose create
 * is pending, or that is not bound yet, is work under way even when Ready says True.
 */

const service = new ServiceClient({
  baseUrl: "http://127.0.0.1:9",
  apiKey: () => "unit-test-key",
  rateLimit: null,
});
afterAll(() => service.close());

const definitions: ControllerDefinition[] = controllers.flatMap(
  (factory) =>
    factory({
      config: operatorConfigSchema.parse({ service: { baseUrl: "https://aidc.invalid" } }),
      connections: new ServiceConnections({ defaultClient: service, newClient: () => service }),
      log: createLogger({ level: "silent" }),
    }) ?? [],
);

/** How the runner picks the lane of a key enqueued from the cache. */
const settledBy = (def: ControllerDefinition) => def.settled ?? looksSettled;

/** An object of generation 1, Ready and Synced True for it, with `annotations`. */
function object(annotations: Record<string, string>): KubeObject {
  const condition = (type: string, reason: string) => ({
    type,
    status: "True",
    reason,
    message: "",
    observedGeneration: 1,
    lastTransitionTime: "2026-01-01T00:00:00Z",
  });
  return {
    metadata: { name: "x", namespace: "team", generation: 1, annotations },
    status: {
      conditions: [condition("Ready", "Available"), condition("Synced", "ReconcileSuccess")],
    },
  } as KubeObject;
}

describe.each(
  ["nasvolume", "trainingjob", "trainingtemplate"].map((name) => {
    const def = definitions.find((d) => d.name === name);
    if (!def) throw new Error(`${name} is not registered`);
    return [name, def] as const;
  }),
)("the registered %s controller", (_name, def) => {
  it("calls a bound object with nothing under way settled", () => {
    expect(settledBy(def)(object({ [ANNOTATIONS.externalId]: "id-1" }))).toBe(true);
  });

  it("calls an object whose create is pending, or that is not bound, not settled", () => {
    expect(settledBy(def)(object({ [ANNOTATIONS.createPending]: "{}" }))).toBe(false);
    expect(settledBy(def)(object({}))).toBe(false);
    // The marker stays beside the id it led to: the id decides.
    const bound = { [ANNOTATIONS.externalId]: "id-1", [ANNOTATIONS.createPending]: "{}" };
    expect(settledBy(def)(object(bound))).toBe(true);
  });
});
