import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { allCrds, catalogCrds } from "../crds/index.js";
import { type ControllerDefinition, controller } from "../runtime/controller.js";
import {
  type DeclaredRule,
  LEADER_ELECTION_PERMISSIONS,
  mergeRules,
  missingPermissions,
  type PolicyRule,
  RUNTIME_PERMISSIONS,
} from "../runtime/permissions.js";
import {
  operatorPermissions,
  permissionsDeclaredBy,
  policyRules,
  registeredControllers,
  withoutCoveredRules,
} from "./permissions.js";

/**
 * The generated RBAC is what the registered controllers declare: the rules the chart
 * grants (and deploy/rbac renders) equal the union of the controllers' and the
 * runtime's declarations, as the running Manager's permissions() merges them, with and
 * without each optional feature. Policy checks (no Secret, no create or delete of the users' objects)
 * then hold for what the controllers declare, not for a copy of it.
 */

const plain = registeredControllers();
const exposing = registeredControllers({ exposure: true });
const exporting = registeredControllers({ credentialsExport: true });
/** What Manager.permissions() reports for `defs`, granted in `grantedIn` (default: the watched namespaces). */
const declared = (defs: ControllerDefinition[], grantedIn?: DeclaredRule["grantedIn"]) =>
  mergeRules(
    grantedIn ? [] : RUNTIME_PERMISSIONS,
    ...defs.map((d) => d.permissions.filter((r) => r.grantedIn === grantedIn)),
  );

/** Both lists grant the same accesses. */
function expectSameAccess(a: readonly PolicyRule[], b: readonly PolicyRule[]): void {
  expect(missingPermissions(a, b)).toEqual([]);
  expect(missingPermissions(b, a)).toEqual([]);
}

/** The rules of the rendered ClusterRole or Role `name` in deploy/rbac/`file`. */
function renderedRules(file: string, name: string): PolicyRule[] {
  const path = join(import.meta.dirname, "../../deploy/rbac", file);
  const docs = parseAllDocuments(readFileSync(path, "utf8")).map(
    (d) => d.toJS() as { metadata: { name: string }; rules: PolicyRule[] },
  );
  const role = docs.find((d) => d.metadata.name === name);
  if (!role) throw new Error(`${name} is not in ${file}`);
  return role.rules;
}

const RESOURCE = {
  group: "example.io",
  version: "v1",
  plural: "widgets",
  kind: "Widget",
  namespaced: true,
};
/** A controller of widgets that declares `rules`. */
const widgets = (rules: DeclaredRule[]) =>
  controller("widget")
    .for(RESOURCE)
    .permissions(rules)
    .reconcile(async () => ({}));
const rule = (resource: string, verbs: string[], reason = "why"): DeclaredRule => ({
  apiGroups: ["example.io"],
  resources: [resource],
  verbs,
  reason,
});

describe("the generated RBAC", () => {
  it("grants what the registered controllers and the runtime declare, no more, no less", () => {
    // One controller per kind of the CRD registry, named after it (the exposure
    // controller only with exposure on), but the catalogs: one mirror per connection
    // writes both (src/controllers/catalog).
    expect(plain.map((d) => [d.name, d.primary.kind]).sort()).toEqual(
      [
        ...allCrds
          .filter((d) => !catalogCrds.includes(d))
          .map((d) => [d.kind.toLowerCase(), d.kind]),
        ["catalog", "ServiceConnection"],
      ].sort(),
    );
    expectSameAccess(policyRules("watched"), declared(plain));
    expectSameAccess(renderedRules("clusterrole.yaml", "aidc-operator"), declared(plain));
    expectSameAccess(policyRules("cluster"), declared(plain, "cluster"));
    expectSameAccess(
      renderedRules("clusterrole-cluster.yaml", "aidc-operator-cluster"),
      declared(plain, "cluster"),
    );
    expectSameAccess(policyRules("connectionSecrets"), declared(plain, "operatorNamespace"));
    expectSameAccess(
      renderedRules("role-connection-secrets.yaml", "aidc-operator-connection-secrets"),
      declared(plain, "operatorNamespace"),
    );
  });

  it("grants what the controllers declare with exposure on when the chart enables it", () => {
    expectSameAccess(policyRules("watched", { exposure: true }), declared(exposing));
    // Without the feature the chart's rules would not cover the exposing controllers.
    const missing = missingPermissions(declared(exposing), policyRules("watched"));
    expect([...new Set(missing.map((r) => r.resources[0]))].sort()).toEqual([
      "endpointslices",
      "services",
    ]);
  });

  it("grants Services and EndpointSlices only with exposure on, as the exposure controller declares them", () => {
    const touches = (rules: readonly PolicyRule[]) =>
      rules.filter((r) => r.resources.some((x) => x === "services" || x === "endpointslices"));
    expect(touches(declared(plain))).toEqual([]);
    const feature = operatorPermissions().filter((p) => p.feature === "exposure");
    expect(feature.map((p) => p.resources[0]).sort()).toEqual(["endpointslices", "services"]);
    for (const p of feature) {
      expect(p.reason).toMatch(/^TrainingJob controller, exposure enabled: /);
      expect(p.verbs).toEqual(["list", "watch", "create", "patch", "delete"]);
    }
    expect(touches(policyRules("watched", { exposure: true }))).toHaveLength(2);
  });

  it("grants what the controllers declare with the credentials export on when the chart enables it", () => {
    expectSameAccess(policyRules("watched", { credentialsExport: true }), declared(exporting));
    const missing = missingPermissions(declared(exporting), policyRules("watched"));
    expect([...new Set(missing.map((r) => r.resources[0]))]).toEqual(["secrets"]);
  });

  it("grants Secrets in the watched namespaces only with the credentials export on, to write a Bucket's Secret", () => {
    const feature = operatorPermissions().filter((p) => p.feature === "credentialsExport");
    expect(
      feature.map(({ apiGroups, resources, verbs, scope }) => ({
        apiGroups,
        resources,
        verbs,
        scope,
      })),
    ).toEqual([
      {
        apiGroups: [""],
        resources: ["secrets"],
        verbs: ["get", "create", "patch", "delete"],
        scope: "watched",
      },
    ]);
    expect(feature[0]?.reason).toMatch(/^Bucket controller, credentialsExport enabled: /);
    // Never list or watch: the operator reads only the Secret a Bucket names.
    expect(
      policyRules("watched", { credentialsExport: true, exposure: true }).filter((r) =>
        r.resources.includes("secrets"),
      ),
    ).toEqual([
      { apiGroups: [""], resources: ["secrets"], verbs: ["get", "create", "patch", "delete"] },
    ]);
  });

  it("grants the Lease of leader election in the release namespace only", () => {
    expectSameAccess(policyRules("leaderElection"), LEADER_ELECTION_PERMISSIONS);
    expectSameAccess(
      renderedRules("role-leader-election.yaml", "aidc-operator-leader-election"),
      LEADER_ELECTION_PERMISSIONS,
    );
    expect(
      policyRules("watched", { exposure: true }).some((r) => r.resources.includes("leases")),
    ).toBe(false);
  });

  it("lets each controller's informers list and watch what they cache", () => {
    for (const def of exposing) {
      const informers = [def.primary, ...def.watches.map((w) => w.resource)].map((r) => ({
        apiGroups: [r.group],
        resources: [r.plural],
        verbs: ["list", "watch"],
      }));
      expect(missingPermissions(informers, def.permissions), def.name).toEqual([]);
    }
  });

  it("reads Secrets only in the connection Secrets' namespace (the credentials export off), creates or deletes none of the users' objects, and uses no wildcard", () => {
    const all = mergeRules(declared(exposing), declared(exposing, "cluster"));
    expect(all.filter((r) => r.resources.includes("secrets"))).toEqual([]);
    expect(declared(exposing, "operatorNamespace")).toEqual([
      { apiGroups: [""], resources: ["secrets"], verbs: ["get", "list", "watch"] },
    ]);
    for (const r of all) expect([...r.apiGroups, ...r.resources, ...r.verbs]).not.toContain("*");
    const kinds = plain.map((d) => d.primary.plural);
    const userOwned = kinds.map((plural) => ({
      apiGroups: ["aidc.io"],
      resources: [plural],
      verbs: ["create", "delete", "deletecollection"],
    }));
    expect(missingPermissions(userOwned, all)).toHaveLength(kinds.length * 3);
  });

  it("names the controller that needs each rule, and why", () => {
    for (const p of operatorPermissions()) expect(p.reason.length).toBeGreaterThan(20);
    expect(operatorPermissions()[0]?.reason).toBe(
      "TrainingJob controller: watch the objects, write annotations and the finalizer",
    );
  });
});

describe("permissionsDeclaredBy", () => {
  it("lists a newly declared rule, with its controller's kind in the reason", () => {
    const out = permissionsDeclaredBy([widgets([rule("widgets", ["get", "patch"])])], {}, []);
    expect(out[0]).toEqual({
      ...rule("widgets", ["get", "patch"]),
      scope: "watched",
      reason: "Widget controller: why",
    });
    expect(out.map((p) => p.scope)).toEqual(["watched", "watched", "leaderElection"]);
  });

  it("lists an access once when two rules grant it, and keeps a rule that adds a verb", () => {
    const wide = rule("widgets", ["get", "list", "watch", "patch"], "wide");
    const out = permissionsDeclaredBy(
      [widgets([rule("widgets", ["get"], "narrow"), wide, rule("widgets/status", ["patch"])])],
      {},
      [],
    );
    expect(out.filter((p) => p.resources[0] === "widgets").map((p) => p.reason)).toEqual([
      "Widget controller: wide",
    ]);
    expect(out.some((p) => p.resources[0] === "widgets/status")).toBe(true);
  });

  it("tags what a feature adds and nothing the controllers declare without it", () => {
    const base = [widgets([rule("widgets", ["get"])])];
    const on = [widgets([rule("widgets", ["get"]), rule("gadgets", ["create"], "gadgets")])];
    const out = permissionsDeclaredBy(base, { exposure: on }, []);
    expect(out.filter((p) => p.feature)).toEqual([
      {
        ...rule("gadgets", ["create"]),
        scope: "watched",
        feature: "exposure",
        reason: "Widget controller, exposure enabled: gadgets",
      },
    ]);
  });
});

describe("withoutCoveredRules", () => {
  it("keeps one of two identical rules, and every rule nothing else grants", () => {
    const a = rule("widgets", ["get"]);
    const b = rule("gadgets", ["get"]);
    expect(withoutCoveredRules([a, { ...a }, b])).toEqual([a, b]);
    expect(withoutCoveredRules([a, b])).toEqual([a, b]);
  });
});
