import { describe, expect, it } from "vitest";
import { chooseConnection, namespaceAllowed, selectorMatches } from "./resolution.js";

const obj = (ref?: string) => ({
  metadata: { namespace: "team-a", name: "x" },
  spec: ref ? { connectionRef: { name: ref } } : {},
});
const ns = (annotations?: Record<string, string>, labels?: Record<string, string>) => ({
  name: "team-a",
  annotations,
  labels,
});

describe("chooseConnection", () => {
  it.each([
    {
      reason: "the object's connectionRef wins over the namespace annotation",
      o: obj("conn-a"),
      n: ns({ "aidc.io/service-connection": "conn-b" }),
      want: { kind: "named", name: "conn-a", source: "connectionRef" },
    },
    {
      reason: "without a ref, the namespace annotation names the connection",
      o: obj(),
      n: ns({ "aidc.io/service-connection": " conn-b " }),
      want: { kind: "named", name: "conn-b", source: "namespace annotation" },
    },
    { reason: "neither: the default connection", o: obj(), n: ns(), want: { kind: "default" } },
    {
      reason: "an unknown namespace: the default connection",
      o: obj(),
      n: undefined,
      want: { kind: "default" },
    },
  ])("$reason", ({ o, n, want }) => {
    expect(chooseConnection(o, n)).toEqual(want);
  });
});

describe("namespaceAllowed", () => {
  it.each([
    { reason: "nothing allowed: no namespace", allowed: undefined, want: false },
    { reason: "listed by name", allowed: { names: ["team-a"] }, want: true },
    { reason: "another name", allowed: { names: ["team-b"] }, want: false },
    { reason: "* allows every namespace", allowed: { names: ["*"] }, want: true },
    {
      reason: "matched by the selector",
      allowed: { selector: { matchLabels: { team: "a" } } },
      want: true,
    },
    {
      reason: "not matched by the selector",
      allowed: { selector: { matchLabels: { team: "b" } } },
      want: false,
    },
  ])("$reason", ({ allowed, want }) => {
    expect(namespaceAllowed({ allowedNamespaces: allowed }, ns({}, { team: "a" }))).toBe(want);
  });
});

describe("selectorMatches", () => {
  const labels = { team: "a", tier: "gold" };
  it.each([
    { reason: "empty selector matches all", sel: {}, want: true },
    {
      reason: "In",
      sel: { matchExpressions: [{ key: "tier", operator: "In" as const, values: ["gold"] }] },
      want: true,
    },
    {
      reason: "NotIn",
      sel: { matchExpressions: [{ key: "tier", operator: "NotIn" as const, values: ["gold"] }] },
      want: false,
    },
    {
      reason: "Exists",
      sel: { matchExpressions: [{ key: "team", operator: "Exists" as const }] },
      want: true,
    },
    {
      reason: "DoesNotExist",
      sel: { matchExpressions: [{ key: "team", operator: "DoesNotExist" as const }] },
      want: false,
    },
  ])("$reason", ({ sel, want }) => {
    expect(selectorMatches(sel, labels)).toBe(want);
  });
});
