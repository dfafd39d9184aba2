import { describe, expect, it } from "vitest";
import {
  LEADER_ELECTION_PERMISSIONS,
  missingPermissions,
  type PolicyRule,
  RUNTIME_PERMISSIONS,
} from "../runtime/permissions.js";
import { operatorPermissions, policyRules, RECONCILED_PLURALS } from "./permissions.js";

const knownVerbs = new Set(["get", "list", "watch", "create", "update", "patch", "delete"]);

describe("operatorPermissions", () => {
  it("covers the four kinds of src/crds", () => {
    expect(RECONCILED_PLURALS).toEqual([
      "trainingjobs",
      "nasvolumes",
      "cciinstances",
      "trainingtemplates",
    ]);
  });

  it("grants no wildcard group, resource or verb", () => {
    for (const p of operatorPermissions) {
      expect([...p.apiGroups, ...p.resources, ...p.verbs]).not.toContain("*");
      for (const verb of p.verbs) expect(knownVerbs, `${verb} in ${p.reason}`).toContain(verb);
    }
  });

  it("gives every reconciled kind its objects, status and finalizers, and no create or delete", () => {
    for (const plural of RECONCILED_PLURALS) {
      const rulesFor = (resource: string) =>
        operatorPermissions.filter(
          (p) => p.apiGroups.includes("aidc.io") && p.resources.includes(resource),
        );
      expect(
        rulesFor(plural)
          .flatMap((p) => p.verbs)
          .sort(),
      ).toEqual(["get", "list", "patch", "update", "watch"]);
      expect(
        rulesFor(`${plural}/status`)
          .flatMap((p) => p.verbs)
          .sort(),
      ).toEqual(["get", "patch", "update"]);
      expect(rulesFor(`${plural}/finalizers`).flatMap((p) => p.verbs)).toEqual(["update"]);
    }
  });

  it("grants no access to Secrets: the key is a file the kubelet mounts", () => {
    expect(operatorPermissions.filter((p) => p.resources.includes("secrets"))).toEqual([]);
  });

  it("grants Services and EndpointSlices only with exposure on, and never get, watch or update", () => {
    const touches = (rules: PolicyRule[]) =>
      rules.filter(
        (r) => r.resources.includes("services") || r.resources.includes("endpointslices"),
      );
    expect(touches(policyRules("watched"))).toEqual([]);
    expect(touches(policyRules("watched", { exposure: false }))).toEqual([]);
    const on = touches(policyRules("watched", { exposure: true }));
    expect(on.map((r) => r.resources[0]).sort()).toEqual(["endpointslices", "services"]);
    for (const r of on) expect(r.verbs).toEqual(["list", "create", "patch", "delete"]);
  });

  it("keeps Leases in the release namespace only", () => {
    const leaseRules = operatorPermissions.filter((p) => p.resources.includes("leases"));
    expect(leaseRules.map((p) => p.scope)).toEqual(["leaderElection"]);
    expect(policyRules("watched").some((r) => r.resources.includes("leases"))).toBe(false);
  });

  it("states a reason for every rule", () => {
    for (const p of operatorPermissions) expect(p.reason.length).toBeGreaterThan(10);
  });

  it("returns plain PolicyRules, without the bookkeeping fields", () => {
    for (const rule of policyRules("watched", { exposure: true })) {
      expect(Object.keys(rule).sort()).toEqual(["apiGroups", "resources", "verbs"]);
    }
  });

  it("covers what the runtime declares it uses: Events where it watches, Leases where it runs", () => {
    expect(missingPermissions(RUNTIME_PERMISSIONS, policyRules("watched"))).toEqual([]);
    expect(missingPermissions(LEADER_ELECTION_PERMISSIONS, policyRules("leaderElection"))).toEqual(
      [],
    );
  });
});
