import * as k8s from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type OperatorPermission, operatorPermissions } from "../../src/controllers/permissions.js";
import { allCrds } from "../../src/crds/index.js";
import {
  type Access,
  CHART_DIR,
  CHART_TEST_BASE_URL,
  canI,
  helmUninstall,
  installChartCrds,
  operatorKubeConfigFor,
  randomSuffix,
  runTool,
  type ServiceAccountRef,
  setArgs,
} from "../support/chart.js";
import { adminKubeConfig, createNamespace } from "../support/kube.js";

/**
 * Least privilege, proven against the API server's RBAC: the chart's ServiceAccount can
 * do each rule the controllers declare (collected by src/controllers/permissions.ts)
 * and nothing around it. The questions
 * are asked as the ServiceAccount itself (impersonation and SelfSubjectAccessReview),
 * the way the operator will run in the e2e tests.
 *
 * The rules in use: test/e2e/operator-as-chart-serviceaccount.test.ts runs the operator
 * with `operatorKubeConfigFor(serviceAccount)` against the emulator (leader election on
 * the chart's Lease, watchNamespaces empty and set), applies deploy/samples and waits
 * for Ready=True with no 403, so that a rule a controller forgets to declare fails there;
 * src/controllers/permissions.test.ts checks that the generated rules are the union of
 * what the registered controllers declare.
 */

const API_KEY_SECRET = "service-api-key";

/** Every single access a permission grants (one per group, resource, verb and name). */
function accessesOf(permission: OperatorPermission, namespace: string): Access[] {
  const names = permission.resourceNames ?? [undefined];
  return permission.apiGroups.flatMap((group) =>
    permission.resources.flatMap((resource) =>
      permission.verbs.flatMap((verb) =>
        names.map((name) => ({ verb, group, resource, namespace, ...(name ? { name } : {}) })),
      ),
    ),
  );
}

/** The accesses of `list` that `kc` is denied (or allowed, with `expectAllowed` false). */
async function mismatches(
  kc: k8s.KubeConfig,
  list: Access[],
  expectAllowed: boolean,
): Promise<string[]> {
  const out: string[] = [];
  for (const access of list) {
    if ((await canI(kc, access)) !== expectAllowed) {
      out.push(
        `${access.verb} ${access.group || "core"}/${access.resource}${access.name ? `/${access.name}` : ""} in ${access.namespace || "all namespaces"}`,
      );
    }
  }
  return out;
}

/** Installs the chart as `release` in `namespace`; returns its ServiceAccount. */
async function installRelease(
  release: string,
  namespace: string,
  values: Record<string, string | number | boolean>,
): Promise<ServiceAccountRef> {
  await runTool("helm", [
    "install",
    release,
    CHART_DIR,
    "--namespace",
    namespace,
    ...setArgs({ "service.baseUrl": CHART_TEST_BASE_URL, ...values }),
  ]);
  return { namespace, name: `${release}-aidc-operator` };
}

describe("the chart's RBAC", () => {
  const admin = adminKubeConfig();
  const installed: { release: string; namespace: string }[] = [];
  let namespace = "";
  let sa: ServiceAccountRef = { namespace: "", name: "" };
  let asOperator: k8s.KubeConfig;

  beforeAll(async () => {
    await installChartCrds();
    namespace = await createNamespace(admin, "rbac");
    const release = `rbac-${randomSuffix()}`;
    sa = await installRelease(release, namespace, { apiKeySecret: API_KEY_SECRET });
    installed.push({ release, namespace });
    const core = admin.makeApiClient(k8s.CoreV1Api);
    for (const name of [API_KEY_SECRET, "another-secret"]) {
      await core.createNamespacedSecret({
        namespace,
        body: { metadata: { name }, stringData: { apiKey: `key-of-${name}` } },
      });
    }
    asOperator = operatorKubeConfigFor(sa);
  });

  afterAll(async () => {
    for (const { release, namespace: ns } of installed) {
      await helmUninstall(release, ns).catch(() => undefined);
    }
  });

  it("lets the ServiceAccount do every rule of operatorPermissions but the optional features'", async () => {
    const accesses = operatorPermissions()
      .filter((p) => !p.feature)
      .flatMap((p) =>
        p.scope === "watched"
          ? [
              ...accessesOf(p, "any-team"),
              // Informers list and watch across all namespaces.
              ...accessesOf(p, "").filter((a) => a.verb === "list" || a.verb === "watch"),
            ]
          : accessesOf(p, namespace),
      );
    expect(accesses.length).toBeGreaterThan(40);
    expect(await mismatches(asOperator, accesses, true)).toEqual([]);
  });

  it("lets the ServiceAccount read Secrets only in the connection Secrets' namespace (the release's), and write none", async () => {
    // ServiceConnections name their API keys there (connections.secretNamespace).
    const allowed: Access[] = [
      { verb: "get", group: "", resource: "secrets", namespace, name: "another-secret" },
      { verb: "list", group: "", resource: "secrets", namespace },
      { verb: "watch", group: "", resource: "secrets", namespace },
    ];
    expect(await mismatches(asOperator, allowed, true)).toEqual([]);
    const denied: Access[] = [
      { verb: "get", group: "", resource: "secrets", namespace: "any-team", name: API_KEY_SECRET },
      { verb: "list", group: "", resource: "secrets", namespace: "any-team" },
      { verb: "list", group: "", resource: "secrets", namespace: "" },
      { verb: "watch", group: "", resource: "secrets", namespace: "" },
      { verb: "create", group: "", resource: "secrets", namespace },
      { verb: "update", group: "", resource: "secrets", namespace, name: API_KEY_SECRET },
      { verb: "delete", group: "", resource: "secrets", namespace, name: API_KEY_SECRET },
    ];
    expect(await mismatches(asOperator, denied, false)).toEqual([]);
    const elsewhere = await asOperator
      .makeApiClient(k8s.CoreV1Api)
      .listNamespacedSecret({ namespace: "default" })
      .then(() => undefined)
      .catch((e: unknown) => e);
    expect((elsewhere as k8s.ApiException<unknown>).code).toBe(403);
  });

  it("grants no Service or EndpointSlice write unless exposure is enabled, and then grants them", async () => {
    const writes = (ns: string): Access[] =>
      (["create", "patch", "delete"] as const).flatMap((verb) => [
        { verb, group: "", resource: "services", namespace: ns },
        { verb, group: "discovery.k8s.io", resource: "endpointslices", namespace: ns },
      ]);
    expect(await mismatches(asOperator, [...writes("any-team"), ...writes("")], false)).toEqual([]);
    const other = await createNamespace(admin, "rbac-expose");
    const release = `expose-${randomSuffix()}`;
    const exposing = await installRelease(release, other, {
      apiKeySecret: API_KEY_SECRET,
      "exposure.enabled": true,
    });
    installed.push({ release, namespace: other });
    const granted = operatorPermissions()
      .filter((p) => p.feature === "exposure")
      .flatMap((p) => accessesOf(p, "any-team"));
    expect(granted.length).toBeGreaterThan(4);
    expect(await mismatches(operatorKubeConfigFor(exposing), granted, true)).toEqual([]);
  });

  it("grants no Secret rule outside the connection Secrets' namespace unless the credentials export is enabled, and then exactly its rules", async () => {
    const verbs = ["get", "list", "watch", "create", "update", "patch", "delete"] as const;
    const inTeams = (ns: string): Access[] =>
      verbs.map((verb) => ({ verb, group: "", resource: "secrets", namespace: ns }));
    expect(await mismatches(asOperator, [...inTeams("any-team"), ...inTeams("")], false)).toEqual(
      [],
    );
    const feature = operatorPermissions().filter((p) => p.feature === "credentialsExport");
    expect(feature.map((p) => [p.scope, p.resources, p.verbs])).toEqual([
      ["watched", ["secrets"], ["get", "create", "patch", "delete"]],
    ]);
    const other = await createNamespace(admin, "rbac-export");
    const release = `export-${randomSuffix()}`;
    const exporting = await installRelease(release, other, {
      apiKeySecret: API_KEY_SECRET,
      "objectStorage.exportCredentials": true,
    });
    installed.push({ release, namespace: other });
    const kc = operatorKubeConfigFor(exporting);
    const granted = feature.flatMap((p) => accessesOf(p, "any-team"));
    expect(granted).toHaveLength(4);
    expect(await mismatches(kc, granted, true)).toEqual([]);
    // Only the Secret a Bucket names: never listed, watched or replaced, in no namespace.
    const denied: Access[] = [
      ...(["list", "watch", "update", "deletecollection"] as const).map((verb) => ({
        verb,
        group: "",
        resource: "secrets",
        namespace: "any-team",
      })),
      { verb: "list", group: "", resource: "secrets", namespace: "" },
      { verb: "watch", group: "", resource: "secrets", namespace: "" },
    ];
    expect(await mismatches(kc, denied, false)).toEqual([]);
    // The chart's ClusterRole carries the feature's rule as generated, and no other on Secrets.
    const role = await admin
      .makeApiClient(k8s.RbacAuthorizationV1Api)
      .readClusterRole({ name: `${release}-aidc-operator` });
    const secretRules = (role.rules ?? []).filter((r) => r.resources?.includes("secrets"));
    expect(secretRules.map((r) => [r.apiGroups, r.resources, r.verbs])).toEqual(
      feature.map((p) => [p.apiGroups, p.resources, p.verbs]),
    );
    // And for real, as the export step does: create, patch, read back, delete.
    const team = await createNamespace(admin, "rbac-export-team");
    const core = kc.makeApiClient(k8s.CoreV1Api);
    await core.createNamespacedSecret({
      namespace: team,
      body: { metadata: { name: "bucket-keys" }, data: { AWS_ACCESS_KEY_ID: "QQ==" } },
    });
    await core.patchNamespacedSecret(
      { namespace: team, name: "bucket-keys", body: { data: { AWS_ACCESS_KEY_ID: "Qg==" } } },
      k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch),
    );
    const read = await core.readNamespacedSecret({ namespace: team, name: "bucket-keys" });
    expect(read.data).toEqual({ AWS_ACCESS_KEY_ID: "Qg==" });
    await core.deleteNamespacedSecret({ namespace: team, name: "bucket-keys" });
    const listed = await core
      .listNamespacedSecret({ namespace: team })
      .then(() => undefined)
      .catch((e: unknown) => e);
    expect((listed as k8s.ApiException<unknown>).code).toBe(403);
  });

  it("never lets the ServiceAccount create or delete the users' custom resources", async () => {
    // Every namespaced kind of the CRD registry.
    const users = allCrds.filter((d) => d.namespaced).map((d) => d.plural);
    expect(users).toEqual(expect.arrayContaining(["trainingjobs", "nasvolumes"]));
    const denied: Access[] = users.flatMap((resource) =>
      ["create", "delete", "deletecollection"].map((verb) => ({
        verb,
        group: "aidc.io",
        resource,
        namespace: "any-team",
      })),
    );
    expect(await mismatches(asOperator, denied, false)).toEqual([]);
  });

  it("keeps Leases to the release namespace, and takes one there for real", async () => {
    const denied: Access[] = [
      { verb: "get", group: "coordination.k8s.io", resource: "leases", namespace: "any-team" },
      {
        verb: "create",
        group: "coordination.k8s.io",
        resource: "leases",
        namespace: "kube-system",
      },
      { verb: "delete", group: "coordination.k8s.io", resource: "leases", namespace },
    ];
    expect(await mismatches(asOperator, denied, false)).toEqual([]);

    const leases = asOperator.makeApiClient(k8s.CoordinationV1Api);
    const lease = await leases.createNamespacedLease({
      namespace,
      body: {
        metadata: { name: "rbac-test-leader" },
        spec: { holderIdentity: "pod-a", leaseDurationSeconds: 15 },
      },
    });
    const updated = await leases.replaceNamespacedLease({
      namespace,
      name: "rbac-test-leader",
      body: { ...lease, spec: { ...lease.spec, holderIdentity: "pod-b" } },
    });
    expect(updated.spec?.holderIdentity).toBe("pod-b");
  });

  it("grants nothing beyond the declared rules", async () => {
    const denied: Access[] = [
      { verb: "list", group: "", resource: "pods", namespace: "" },
      // ConfigMaps: get, create, patch and delete for spec.exportTo, never list or update.
      { verb: "list", group: "", resource: "configmaps", namespace },
      { verb: "update", group: "", resource: "configmaps", namespace },
      { verb: "list", group: "", resource: "nodes", namespace: "" },
      { verb: "create", group: "apps", resource: "deployments", namespace },
      {
        verb: "get",
        group: "apiextensions.k8s.io",
        resource: "customresourcedefinitions",
        namespace: "",
      },
      { verb: "create", group: "", resource: "events", namespace: "any-team" },
      {
        verb: "escalate",
        group: "rbac.authorization.k8s.io",
        resource: "clusterroles",
        namespace: "",
      },
      { verb: "impersonate", group: "", resource: "serviceaccounts", namespace: "" },
      { verb: "delete", group: "aidc.io", resource: "trainingjobs/status", namespace: "any-team" },
    ];
    expect(await mismatches(asOperator, denied, false)).toEqual([]);
  });

  it("grants the watched rules only in watchNamespaces when it is set", async () => {
    const ns = await createNamespace(admin, "scoped");
    const watched = await createNamespace(admin, "team");
    const release = `scoped-${randomSuffix()}`;
    const scopedSa = await installRelease(release, ns, { "watchNamespaces[0]": watched });
    installed.push({ release, namespace: ns });
    const kc = operatorKubeConfigFor(scopedSa);
    const watchedRules = operatorPermissions().filter((p) => p.scope === "watched" && !p.feature);
    expect(
      await mismatches(
        kc,
        watchedRules.flatMap((p) => accessesOf(p, watched)),
        true,
      ),
    ).toEqual([]);
    const elsewhere = watchedRules.flatMap((p) => [
      ...accessesOf(p, "not-watched"),
      ...accessesOf(p, "").filter((a) => a.verb === "list" || a.verb === "watch"),
    ]);
    expect(await mismatches(kc, elsewhere, false)).toEqual([]);
  });
});
