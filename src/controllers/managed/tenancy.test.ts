import { describe, expect, it } from "vitest";
import type { KubeObject } from "../../runtime/resource.js";
import type { ManagedObject } from "./call.js";
import {
  BINDING_REFUSALS,
  boundByHand,
  claimedIds,
  decideFirstBinder,
  decideOwnership,
  formatOwnerMark,
  mayAdopt,
  ownerMark,
  parseOwnerMark,
} from "./tenancy.js";

function obj(
  namespace: string,
  name: string,
  created: string,
  uid: string,
  extra: Partial<KubeObject> = {},
): KubeObject {
  return {
    metadata: { namespace, name, uid, creationTimestamp: created },
    ...extra,
  } as KubeObject;
}

describe("mayAdopt", () => {
  it.each([
    { reason: "none by default", allowed: [], ns: "a", want: false },
    { reason: "a listed namespace", allowed: ["a"], ns: "a", want: true },
    { reason: "another namespace", allowed: ["a"], ns: "b", want: false },
    { reason: "* is every namespace", allowed: ["*"], ns: "b", want: true },
  ])("$reason", ({ allowed, ns, want }) => {
    expect(mayAdopt(allowed, ns)).toBe(want);
  });
});

describe("owner marks", () => {
  it("are stable, hide the names, and read back", () => {
    const m = ownerMark("team-a", "data");
    expect(ownerMark("team-a", "data")).toEqual(m);
    expect(ownerMark("team-a", "other").namespace).toBe(m.namespace);
    expect(ownerMark("team-b", "data").namespace).not.toBe(m.namespace);
    const text = formatOwnerMark(m);
    expect(text).not.toContain("team-a");
    expect(parseOwnerMark(text)).toEqual(m);
    expect(parseOwnerMark("team-a/data")).toBeUndefined();
    expect(parseOwnerMark(undefined)).toBeUndefined();
  });
});

describe("decideOwnership", () => {
  const base = { namespace: "team-b", alreadyBound: false, adoptionAllowed: false, what: "X" };
  const unread = { unread: "env" };
  it.each([
    { reason: "own namespace's mark", input: { mark: ownerMark("team-b", "x") }, want: undefined },
    {
      reason: "another namespace's mark, even where adoption is allowed",
      input: { mark: ownerMark("team-a", "x"), adoptionAllowed: true },
      want: BINDING_REFUSALS.ownedElsewhere,
    },
    {
      reason: "another namespace's mark, even if bound before",
      input: { mark: ownerMark("team-a", "x"), alreadyBound: true },
      want: BINDING_REFUSALS.ownedElsewhere,
    },
    { reason: "no mark, not allowed", input: { mark: undefined }, want: BINDING_REFUSALS.adoption },
    {
      reason: "no mark, allowed",
      input: { mark: undefined, adoptionAllowed: true },
      want: undefined,
    },
    {
      reason: "no mark, bound before (the status records it)",
      input: { mark: undefined, alreadyBound: true },
      want: undefined,
    },
    {
      reason: "no mark, even from the object's own create",
      input: { mark: undefined, ownCreate: true },
      want: BINDING_REFUSALS.adoption,
    },
    { reason: "an unread mark", input: { mark: unread }, want: BINDING_REFUSALS.adoption },
    {
      reason: "an unread mark, from the object's own create",
      input: { mark: unread, ownCreate: true },
      want: undefined,
    },
    {
      reason: "an unread mark, bound before",
      input: { mark: unread, alreadyBound: true },
      want: undefined,
    },
    {
      reason: "an unread mark, allowed",
      input: { mark: unread, adoptionAllowed: true },
      want: undefined,
    },
  ])("$reason", ({ input, want }) => {
    expect(decideOwnership({ ...base, ...input })?.reason).toBe(want);
  });

  it("names the field an unread mark travels in", () => {
    expect(decideOwnership({ ...base, mark: unread })?.message).toBe(
      "X: the service shows it without env, where the operator's owner mark travels, so whether the operator created it for an object of namespace team-b cannot be read, and team-b may not adopt remote resources; allow it with adoption.namespaces (operator config; chart value adoption.namespaces)",
    );
  });

  it("names the setting that allows an adoption", () => {
    expect(decideOwnership({ ...base, mark: undefined })?.message).toContain("adoption.namespaces");
  });
});

describe("decideFirstBinder", () => {
  const a = obj("team-a", "first", "2026-01-01T00:00:00Z", "uid-a");
  const b = obj("team-b", "second", "2026-01-01T00:00:05Z", "uid-b");
  const a2 = obj("team-a", "twin", "2026-01-01T00:00:00Z", "uid-0");

  it("lets the first claimant bind and refuses a later one", () => {
    expect(decideFirstBinder(a, "id", [a, b], "the NAS", "NasVolume")).toBeUndefined();
    expect(decideFirstBinder(b, "id", [a, b], "the NAS", "NasVolume")?.reason).toBe(
      BINDING_REFUSALS.alreadyBound,
    );
  });

  it("breaks a tie of creation times by uid", () => {
    expect(decideFirstBinder(a2, "id", [a, a2], "the NAS", "NasVolume")).toBeUndefined();
    expect(decideFirstBinder(a, "id", [a, a2], "the NAS", "NasVolume")).toBeDefined();
  });

  it("puts a claimant whose status records the id (bound before) ahead of an older one", () => {
    const bound = obj("team-a", "bound", "2026-01-01T00:00:09Z", "uid-z");
    const verified = (o: KubeObject) => o.metadata?.name === "bound";
    expect(decideFirstBinder(bound, "id", [a, bound], "the NAS", "NasVolume", verified)).toBe(
      undefined,
    );
    expect(decideFirstBinder(a, "id", [a, bound], "the NAS", "NasVolume", verified)?.reason).toBe(
      BINDING_REFUSALS.alreadyBound,
    );
  });

  it("names the other object only when it is in the same namespace", () => {
    const across = decideFirstBinder(b, "id", [a, b], "the NAS", "NasVolume")?.message ?? "";
    expect(across).toContain("another object (in another namespace)");
    expect(across).not.toContain("team-a");
    expect(across).not.toContain("first");
    const same = decideFirstBinder(a, "id", [a, a2], "the NAS", "NasVolume")?.message ?? "";
    expect(same).toContain("NasVolume twin of this namespace");
  });
});

describe("claimedIds", () => {
  it("lists the annotation and the spec id, and nothing for a refused claimant", () => {
    const o = obj("a", "n", "2026-01-01T00:00:00Z", "u", {
      metadata: {
        namespace: "a",
        name: "n",
        annotations: { "aidc.io/external-id": "x" },
      },
    });
    expect(claimedIds(o, "y")).toEqual(["x", "y"]);
    expect(claimedIds(o, "x")).toEqual(["x"]);
    expect(claimedIds(o, " ")).toEqual(["x"]);
    const bare = { ...o, metadata: { namespace: "a", name: "n" } } as KubeObject;
    expect(claimedIds(bare, " y ")).toEqual(["y"]);
    expect(claimedIds(bare, undefined)).toEqual([]);
    const refused = {
      ...o,
      status: { conditions: [{ type: "Ready", status: "False", reason: "AdoptionRefused" }] },
    } as KubeObject;
    expect(claimedIds(refused, "y")).toEqual([]);
  });
});

describe("boundByHand", () => {
  type Remote = { mark?: string };
  const marks = { ownerOf: (r: Remote) => parseOwnerMark(r.mark) };
  const job: ManagedObject = { metadata: { namespace: "a", name: "job" }, spec: {} };
  const kind = { resource: { kind: "Gizmo" } } as Parameters<typeof boundByHand>[1];
  const specId = { ...kind, adoptId: () => "id-1" };
  it.each([
    {
      reason: "a resource the operator created for this object (its mark) is its own",
      client: marks,
      k: kind,
      remote: { mark: formatOwnerMark(ownerMark("a", "job")) },
      want: false,
    },
    {
      reason: "a resource made for another object of the namespace is adopted",
      client: marks,
      k: kind,
      remote: { mark: formatOwnerMark(ownerMark("a", "other")) },
      want: true,
    },
    {
      reason: "a resource without a mark (made outside the cluster) is adopted",
      client: marks,
      k: kind,
      remote: {},
      want: true,
    },
    {
      reason: "the spec's id adopts, whatever the mark",
      client: marks,
      k: specId,
      remote: { mark: formatOwnerMark(ownerMark("a", "job")) },
      want: true,
    },
    {
      reason: "a kind whose client reads no marks adopts by the spec's id only",
      client: {},
      k: kind,
      remote: {},
      want: false,
    },
  ])("$reason", ({ client, k, remote, want }) => {
    expect(boundByHand(client, k, job, remote)).toBe(want);
  });
});
