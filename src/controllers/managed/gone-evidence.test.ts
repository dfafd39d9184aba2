import { describe, expect, it } from "vitest";
import type { ReconcileContext } from "../../runtime/controller.js";
import type { ResourceDescriptor } from "../../runtime/resource.js";
import { ServiceAuthError, ServiceUnavailableError } from "../../service/errors.js";
import type { ListedIds } from "../../service/pagination.js";
import type { ManagedObject } from "./call.js";
import type { KindClient, ManagedKind } from "./external-client.js";
import { listEvidence, notShownYet, readFailureMayMeanGone } from "./gone-evidence.js";
import { ManagedRun } from "./run.js";

const RES: ResourceDescriptor = {
  group: "test.io",
  version: "v1",
  plural: "things",
  kind: "Thing",
  namespaced: true,
};
const NOW = Date.parse("2026-11-23T12:00:00Z");
const err500 = new ServiceUnavailableError("GET /x failed with status 500", {
  endpoint: "getNas",
  code: 500,
});

/** A run of one object bound to `nas-1`, created `ageMs` ago, over a list answering `listed`. */
function setup(listed: () => ListedIds | undefined, ageMs = 3_600_000) {
  const client = {
    listIds: async () => listed(),
  } as unknown as KindClient<ManagedObject, unknown>;
  const kind = {
    resource: RES,
    finalizer: "f",
    connect: () => client,
    status: () => ({}),
  } as ManagedKind<ManagedObject, unknown>;
  const obj = {
    metadata: { name: "a", namespace: "ns", uid: "u-1" },
    spec: {},
    status: {
      subscription: {
        outcome: "Succeeded",
        submittedTime: new Date(NOW - ageMs).toISOString(),
      },
    },
  } as ManagedObject;
  const ctx = { clock: { now: () => new Date(NOW) } } as unknown as ReconcileContext;
  return new ManagedRun(kind, obj, ctx, () => client);
}

const complete = (...ids: string[]): ListedIds => ({ ids: new Set(ids), complete: true });

describe("listEvidence", () => {
  it("counts a resource gone after two complete listings in a row without it", async () => {
    const run = setup(() => complete("nas-2"));
    expect(await listEvidence(run, "nas-1", err500, 60_000)).toEqual({
      verdict: "Absent",
      listings: 1,
    });
    expect(await listEvidence(run, "nas-1", err500, 60_000)).toEqual({
      verdict: "Gone",
      listings: 2,
    });
  });

  it("starts counting again when the resource is listed or read again", async () => {
    let ids = complete();
    const run = setup(() => ids);
    await listEvidence(run, "nas-1", err500, 60_000);
    ids = complete("nas-1");
    expect((await listEvidence(run, "nas-1", err500, 60_000)).verdict).toBe("None");
    ids = complete();
    expect((await listEvidence(run, "nas-1", err500, 60_000)).verdict).toBe("Absent");
    run.forgetAbsences();
    expect((await listEvidence(run, "nas-1", err500, 60_000)).verdict).toBe("Absent");
  });

  it("takes no incomplete listing and no missing list operation as evidence", async () => {
    const partial = setup(() => ({ ids: new Set(), complete: false }));
    for (let i = 0; i < 3; i++) {
      expect((await listEvidence(partial, "nas-1", err500, 0)).verdict).toBe("None");
    }
    const none = setup(() => undefined);
    expect((await listEvidence(none, "nas-1", err500, 0)).verdict).toBe("None");
    const failing = setup(() => {
      throw err500;
    });
    expect((await listEvidence(failing, "nas-1", err500, 0)).verdict).toBe("None");
  });

  it("does not count a resource gone within the visibility window of its create", async () => {
    const run = setup(() => complete(), 5_000);
    await listEvidence(run, "nas-1", err500, 60_000);
    expect(await listEvidence(run, "nas-1", err500, 60_000)).toEqual({
      verdict: "Absent",
      listings: 2,
    });
  });

  it("lists only after failures that may mean the resource is gone", async () => {
    expect(readFailureMayMeanGone(err500)).toBe(true);
    const auth = new ServiceAuthError("refused", { endpoint: "getNas", code: 403 });
    expect(readFailureMayMeanGone(auth)).toBe(false);
    const offline = new ServiceUnavailableError("ECONNRESET", {
      endpoint: "getNas",
      code: undefined,
    });
    expect(readFailureMayMeanGone(offline)).toBe(false);
    expect(readFailureMayMeanGone(new Error("x"))).toBe(false);
    const run = setup(() => complete());
    expect((await listEvidence(run, "nas-1", auth, 0)).verdict).toBe("None");
  });
});

describe("notShownYet", () => {
  const withReady = (run: ManagedRun<ManagedObject, unknown>, reason: string) => {
    const condition = { type: "Ready", status: "False", reason, message: "" };
    run.obj = { ...run.obj, status: { ...run.obj.status, conditions: [condition] } } as never;
    return run;
  };
  const window = { visibilityGraceMs: 60_000 };

  it.each([
    {
      reason: "a resource ordered 5 s ago, never read",
      ageMs: 5_000,
      ready: undefined,
      unseen: true,
    },
    { reason: "one still Creating", ageMs: 5_000, ready: "Creating", unseen: true },
    {
      reason: "one read before (Ready Available)",
      ageMs: 5_000,
      ready: "Available",
      unseen: false,
    },
    { reason: "one ordered past the window", ageMs: 60_000, ready: "Creating", unseen: false },
  ])("takes an unknown id for not known yet only for a recent order: $reason", (c) => {
    const run = setup(() => undefined, c.ageMs);
    if (c.ready) withReady(run, c.ready);
    expect(notShownYet(run, "nas-1", window) !== undefined).toBe(c.unseen);
  });

  it("never for a resource without a recorded order or one the spec names", () => {
    const run = setup(() => undefined, 5_000);
    expect(notShownYet(run, "nas-1", window, "")).toBeUndefined();
    const adopting = {
      obj: run.obj,
      adoptId: "nas-1",
      facts: () => run.facts(),
      ageOf: (at: string) => run.ageOf(at),
    };
    expect(notShownYet(adopting, "nas-1", window)).toBeUndefined();
    expect(notShownYet(run, "nas-1", window)).toMatch(
      /does not know the new remote resource nas-1 yet/,
    );
  });
});
