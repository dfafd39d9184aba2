import { describe, expect, it } from "vitest";
import type { KubeClient } from "../../runtime/kube.js";
import type { KubeObject } from "../../runtime/resource.js";
import { applyExposure } from "./expose-sync.js";
import type { TrainingJobObject } from "./objects.js";

const job = { metadata: { name: "j", namespace: "ml" }, spec: {} } as unknown as TrainingJobObject;
const obj = (name: string, addressType?: string): KubeObject => ({
  metadata: { name },
  ...(addressType ? { addressType } : {}),
});

describe("applyExposure", () => {
  const calls: string[] = [];
  const kube = {
    create: async (r: { kind: string }, o: KubeObject) =>
      calls.push(`create ${r.kind} ${o.metadata?.name}`),
    patch: async (r: { kind: string }, k: { name: string }) =>
      calls.push(`patch ${r.kind} ${k.name}`),
    delete: async (r: { kind: string }, k: { name: string }) =>
      calls.push(`delete ${r.kind} ${k.name}`),
  } as unknown as KubeClient;

  it("names a Service with its slice once, and a slice changed alone by itself", async () => {
    const summary = await applyExposure(kube, job, {
      services: [{ op: "create", object: obj("a") }],
      slices: [
        { op: "create", object: obj("a", "IPv4") },
        { op: "update", object: obj("b", "IPv4"), existing: obj("b", "IPv4") },
      ],
      refused: [],
    });
    expect(summary).toBe("created Service a; updated EndpointSlice b");
    expect(calls).toEqual(["create Service a", "create EndpointSlice a", "patch EndpointSlice b"]);
  });
});
