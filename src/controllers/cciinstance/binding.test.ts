import { describe, expect, it } from "vitest";
import { CCI_INSTANCE_REASONS } from "../../crds/cciinstance.js";
import type { CciInstance } from "../../service/schemas/cci.js";
import { boundCondition } from "./announcements.js";
import { type Binding, type BindingInput, decideBinding, recordedInstanceId } from "./binding.js";

const inst = (id: string, name: string, aidcId = 1, status = "RUNNING"): CciInstance => ({
  id,
  name,
  aidcId,
  status,
});

const listed = [
  inst("cci-1", "alice"),
  inst("cci-2", "bob", 1),
  inst("cci-3", "bob", 2, "STOPPED"),
  inst("cci-4", "alice-2"),
];

const R = CCI_INSTANCE_REASONS.names;

describe("decideBinding", () => {
  const cases: {
    reason: string;
    input: Omit<BindingInput, "instances">;
    want: Partial<Binding>;
    message?: RegExp;
  }[] = [
    {
      reason: "spec.instanceId binds directly, even to an instance the list does not show",
      input: { spec: { instanceId: "cci-99" }, recordedId: undefined },
      want: { bound: true, instanceId: "cci-99", via: "instanceId" },
    },
    {
      reason: "spec.instanceId wins over an edited annotation",
      input: { spec: { instanceId: "cci-1" }, recordedId: "cci-2" },
      want: { bound: true, instanceId: "cci-1", via: "instanceId" },
    },
    {
      reason: "a name matching exactly one instance binds it",
      input: { spec: { name: "alice" }, recordedId: undefined },
      want: { bound: true, instanceId: "cci-1", via: "name" },
    },
    {
      reason: "the name must match exactly: a fuzzy match (alice-2) does not count",
      input: { spec: { name: "alic" }, recordedId: undefined },
      want: { bound: false, reason: R.NoMatchingInstance },
      message: /no CCI instance is named "alic"/,
    },
    {
      reason: "a name shared by two instances binds none and names both",
      input: { spec: { name: "bob" }, recordedId: undefined },
      want: { bound: false, reason: R.AmbiguousName },
      message:
        /2 CCI instances are named "bob": cci-2 \(RUNNING, aidcId 1\), cci-3 \(STOPPED, aidcId 2\)/,
    },
    {
      reason: "aidcId narrows a shared name to one instance",
      input: { spec: { name: "bob", aidcId: 2 }, recordedId: undefined },
      want: { bound: true, instanceId: "cci-3", via: "name" },
    },
    {
      reason: "aidcId that no instance of the name has leaves it unbound and says where it looked",
      input: { spec: { name: "alice", aidcId: 7 }, recordedId: undefined },
      want: { bound: false, reason: R.NoMatchingInstance },
      message: /in compute center 7/,
    },
    {
      reason: "a recorded id keeps the binding when the name became ambiguous (restore, rename)",
      input: { spec: { name: "bob" }, recordedId: "cci-2" },
      want: { bound: true, instanceId: "cci-2", via: "recorded" },
    },
  ];
  for (const c of cases) {
    it(c.reason, () => {
      const got = decideBinding({ ...c.input, instances: listed });
      expect(got).toMatchObject(c.want);
      if (c.message) expect(got.bound ? "" : got.message).toMatch(c.message);
    });
  }

  it("names at most ten candidates and counts the rest", () => {
    const many = Array.from({ length: 13 }, (_, i) => inst(`cci-${i}`, "same"));
    const got = decideBinding({ spec: { name: "same" }, recordedId: undefined, instances: many });
    expect(got.bound ? "" : got.message).toMatch(/cci-9 \(RUNNING, aidcId 1\) and 3 more/);
  });
});

describe("recordedInstanceId", () => {
  const cases = [
    { reason: "the annotation wins (status is not restored)", a: "x", s: "y", want: "x" },
    { reason: "the status serves when the annotation is missing", a: undefined, s: "y", want: "y" },
    { reason: "blank values count as absent", a: " ", s: "", want: undefined },
  ];
  for (const c of cases) {
    it(c.reason, () => expect(recordedInstanceId(c.a, c.s)).toBe(c.want));
  }
});

describe("the Bound condition's message", () => {
  const cases: { via: "recorded" | "instanceId" | "name"; says: string }[] = [
    { via: "recorded", says: "by the id it recorded (annotation aidc.io/external-id)" },
    { via: "instanceId", says: "by spec.instanceId" },
    { via: "name", says: "by its name (spec.name)" },
  ];
  for (const c of cases) {
    it(`names what bound the object in words, not the decision's code: ${c.via}`, () => {
      const cond = boundCondition({ bound: true, instanceId: "cci-1", via: c.via });
      expect(cond.message).toBe(`bound to CCI instance cci-1 ${c.says}`);
    });
  }
});
