import { describe, expect, it } from "vitest";
import type { ManagedObject } from "./call.js";
import { deletesRemote, isPaused, policiesOf, reconcileRequest } from "./policies.js";

const obj = (
  spec: ManagedObject["spec"],
  annotations: Record<string, string> = {},
  status: ManagedObject["status"] = {},
): ManagedObject => ({ metadata: { name: "a", annotations }, spec, status });

describe("steering an object", () => {
  it("reads an absent list and * as every policy", () => {
    const all = { observe: true, create: true, update: true, delete: true, lateInitialize: true };
    expect(policiesOf(obj({}))).toEqual(all);
    expect(policiesOf(obj({ managementPolicies: ["*"] }))).toEqual(all);
  });

  it("reads Observe alone as observe-only", () => {
    expect(policiesOf(obj({ managementPolicies: ["Observe"] }))).toEqual({
      observe: true,
      create: false,
      update: false,
      delete: false,
      lateInitialize: false,
    });
  });

  it("deletes the remote resource only with deletionPolicy Delete and the Delete policy", () => {
    expect(deletesRemote(obj({ deletionPolicy: "Delete" }))).toBe(true);
    expect(deletesRemote(obj({ deletionPolicy: "Orphan" }))).toBe(false);
    expect(deletesRemote(obj({}))).toBe(false);
    expect(
      deletesRemote(obj({ deletionPolicy: "Delete", managementPolicies: ["Observe", "Update"] })),
    ).toBe(false);
    expect(
      deletesRemote(obj({ deletionPolicy: "Delete", managementPolicies: ["Observe", "Delete"] })),
    ).toBe(true);
  });

  it("pauses on the value true only", () => {
    expect(isPaused(obj({}, { "aidc.io/paused": "true" }))).toBe(true);
    expect(isPaused(obj({}, { "aidc.io/paused": "false" }))).toBe(false);
    expect(isPaused(obj({}))).toBe(false);
  });

  it("asks for a reconcile until the value is echoed in status", () => {
    const asked = { "aidc.io/reconcile-requested-at": "t1" };
    expect(reconcileRequest(obj({}, asked))).toBe("t1");
    expect(reconcileRequest(obj({}, asked, { lastHandledReconcileAt: "t1" }))).toBeUndefined();
    expect(reconcileRequest(obj({}, asked, { lastHandledReconcileAt: "t0" }))).toBe("t1");
    expect(reconcileRequest(obj({}))).toBeUndefined();
  });
});
