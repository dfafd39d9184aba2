import { describe, expect, it } from "vitest";
import type { KubeObject } from "../../runtime/resource.js";
import {
  chooseConnection,
  connectionMetricLabel,
  namespaceAllowed,
  selectorMatches,
} from "./resolution.js";

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

const chosen = (obj: KubeObject) =>
  (obj as { spec?: { connectionRef?: { name?: string } } }).spec?.connectionRef?.name;

describe("connectionMetricLabel", () => {
  const label = connectionMetricLabel({
    chosenName: chosen,
    // Only the ServiceConnection team-a is cached.
    connectionObject: (name) => (name === "team-a" ? { metadata: { name } } : undefined),
  });
  it("labels a key the cache has no object of as the default connection's", () => {
    expect(label(undefined)).toBe("_default");
  });
  it.each([
    {
      case: "an object of the default connection",
      obj: { kind: "NasVolume", spec: {} },
      want: "_default",
    },
    {
      case: "an object of an existing connection",
      obj: { kind: "NasVolume", spec: { connectionRef: { name: "team-a" } } },
      want: "team-a",
    },
    {
      case: "an object naming a connection that does not exist",
      obj: { kind: "NasVolume", spec: { connectionRef: { name: "typo-1234" } } },
      want: "_missing",
    },
    {
      case: "a ServiceConnection: its own name",
      obj: { kind: "ServiceConnection", metadata: { name: "team-b" } },
      want: "team-b",
    },
  ])("labels $case as $want", ({ obj, want }) => {
    expect(label(obj as KubeObject)).toBe(want);
  });
});
