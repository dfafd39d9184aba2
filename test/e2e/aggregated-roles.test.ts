import * as k8s from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { allCrds, catalogCrds } from "../../src/crds/index.js";
import {
  type Access,
  canI,
  helmTemplate,
  installChartCrds,
  parseObjects,
  randomSuffix,
  runTool,
} from "../support/chart.js";
import {
  adminKubeConfig,
  createNamespace,
  eventually,
  impersonatingKubeConfig,
} from "../support/kube.js";

/**
 * The chart's aggregated ClusterRoles (src/controllers/user-roles.ts) on the real control
 * plane, whose kube-controller-manager runs ClusterRole aggregation as a cluster does: a
 * user bound to the built-in `edit` role in a namespace may create, change and delete
 * the custom resources there; a `view` user may only read them; neither writes status.
 */

const GROUP = "aidc.io";
/** The namespaced kinds: a namespace's users never get the cluster-scoped ServiceConnection. */
const PLURALS = allCrds.filter((c) => c.namespaced).map((c) => c.plural);

describe("the chart's aggregated ClusterRoles", () => {
  const admin = adminKubeConfig();
  const rbac = admin.makeApiClient(k8s.RbacAuthorizationV1Api);
  const release = `agg-${randomSuffix()}`;
  let namespace = "";
  let roleNames: string[] = [];

  /** Binds `user` to the built-in ClusterRole `role` in the test namespace. */
  async function bind(user: string, role: string): Promise<k8s.KubeConfig> {
    await rbac.createNamespacedRoleBinding({
      namespace,
      body: {
        metadata: { name: `${user}-${role}` },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: role },
        subjects: [{ apiGroup: "rbac.authorization.k8s.io", kind: "User", name: user }],
      },
    });
    return impersonatingKubeConfig(user);
  }

  const on = (verb: string, resource: string, ns = namespace): Access => ({
    verb,
    group: GROUP,
    resource,
    namespace: ns,
  });

  beforeAll(async () => {
    await installChartCrds();
    namespace = await createNamespace(admin, "team");
    const roles = parseObjects(await helmTemplate(release, "aidc-system")).filter(
      (o) =>
        o.kind === "ClusterRole" &&
        Object.keys(o.metadata.labels ?? {}).some((l) =>
          l.startsWith("rbac.authorization.k8s.io/aggregate-to-"),
        ),
    );
    roleNames = roles.map((r) => r.metadata.name).sort();
    await runTool(
      "kubectl",
      ["apply", "--server-side", "-f", "-"],
      roles.map((r) => JSON.stringify(r)).join("\n"),
    );
  });

  afterAll(async () => {
    for (const name of roleNames) {
      await rbac.deleteClusterRole({ name }).catch(() => undefined);
    }
  });

  it("renders a view, a catalog-view and an edit role, labelled for the built-in roles", () => {
    expect(roleNames).toEqual([
      `${release}-aidc-operator-catalog-view`,
      `${release}-aidc-operator-edit`,
      `${release}-aidc-operator-view`,
    ]);
  });

  it("lets a namespace editor create, change and delete every kind, there only, and not its status", async () => {
    const editor = await bind(`editor-${randomSuffix()}`, "edit");
    for (const plural of PLURALS) {
      for (const verb of ["create", "update", "patch", "delete", "get", "list", "watch"]) {
        // The aggregation controller adds the rules to `edit` shortly after they appear.
        await eventually(() => canI(editor, on(verb, plural)), 30_000);
      }
      expect(await canI(editor, on("patch", `${plural}/status`))).toBe(false);
      expect(await canI(editor, on("create", plural, "default"))).toBe(false);
    }
  });

  it("lets a namespace admin delete every kind", async () => {
    const nsAdmin = await bind(`admin-${randomSuffix()}`, "admin");
    for (const plural of PLURALS) {
      await eventually(() => canI(nsAdmin, on("deletecollection", plural)), 30_000);
    }
  });

  it("lets a namespace viewer read every kind and change none", async () => {
    const viewer = await bind(`viewer-${randomSuffix()}`, "view");
    for (const plural of PLURALS) {
      for (const verb of ["get", "list", "watch"]) {
        await eventually(() => canI(viewer, on(verb, plural)), 30_000);
      }
      for (const verb of ["create", "update", "patch", "delete"]) {
        expect(await canI(viewer, on(verb, plural))).toBe(false);
      }
    }
  });

  it("lets a cluster-wide viewer read the product catalogs and nobody but the operator write them", async () => {
    const user = `viewer-${randomSuffix()}`;
    await rbac.createClusterRoleBinding({
      body: {
        metadata: { name: `${user}-view` },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "view" },
        subjects: [{ apiGroup: "rbac.authorization.k8s.io", kind: "User", name: user }],
      },
    });
    const editor = await bind(`editor-${randomSuffix()}`, "edit");
    try {
      const viewer = impersonatingKubeConfig(user);
      for (const { plural } of catalogCrds) {
        for (const verb of ["get", "list", "watch"]) {
          await eventually(() => canI(viewer, on(verb, plural, "")), 30_000);
        }
        for (const who of [viewer, editor]) {
          for (const verb of ["create", "update", "patch", "delete"]) {
            expect(await canI(who, on(verb, plural, ""))).toBe(false);
          }
        }
      }
    } finally {
      await rbac.deleteClusterRoleBinding({ name: `${user}-view` }).catch(() => undefined);
    }
  });

  it("lets a user bound cluster-wide to catalog-view read the catalogs and no other kind", async () => {
    const user = `reader-${randomSuffix()}`;
    const name = `${release}-aidc-operator-catalog-view`;
    await rbac.createClusterRoleBinding({
      body: {
        metadata: { name: user },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name },
        subjects: [{ apiGroup: "rbac.authorization.k8s.io", kind: "User", name: user }],
      },
    });
    try {
      const reader = impersonatingKubeConfig(user);
      for (const { plural } of catalogCrds) {
        await eventually(() => canI(reader, on("list", plural, "")), 30_000);
      }
      for (const plural of PLURALS) expect(await canI(reader, on("list", plural))).toBe(false);
    } finally {
      await rbac.deleteClusterRoleBinding({ name: user }).catch(() => undefined);
    }
  });
});
