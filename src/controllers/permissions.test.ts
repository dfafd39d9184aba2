import { describe, expect, it } from "vitest";
import {
  LEADER_ELECTION_PERMISSIONS,
  missingPermissions,
  RUNTIME_PERMISSIONS,
} from "../runtime/permissions.js";
import {
  API_KEY_SECRET_NAME,
  operatorPermissions,
  policyRules,
  RECONCILED_PLURALS,
} from "./permissions.js";

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

  it("reads Secrets only by the API-key Secret's name, in the release namespace", () => {
    const secretRules = operatorPermissions.filter((p) => p.resources.includes("secrets"));
    expect(secretRules).toHaveLength(1);
    expect(secretRules[0]).toMatchObject({
      scope: "apiKeySecret",
      verbs: ["get"],
      resourceNames: [API_KEY_SECRET_NAME],
    });
  });

  it("keeps Leases in the release namespace only", () => {
    const leaseRules = operatorPermissions.filter((p) => p.resources.includes("leases"));
    expect(leaseRules.map((p) => p.scope)).toEqual(["leaderElection"]);
    expect(policyRules("watched").some((r) => r.resources.includes("leases"))).toBe(false);
  });

  it("states a reason for every rule", () => {
    for (const p of operatorPermissions) expect(p.reason.length).toBeGreaterThan(10);
  });

  it("returns plain PolicyRules, with resourceNames only where a rule has them", () => {
    const [secret] = policyRules("apiKeySecret");
    expect(secret).toEqual({
      apiGroups: [""],
      resources: ["secrets"],
      verbs: ["get"],
      resourceNames: [API_KEY_SECRET_NAME],
    });
    for (const rule of policyRules("watched")) {
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
