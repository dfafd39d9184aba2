/**
 * What people may do with the operator's kinds, through the built-in user-facing roles:
 * the chart ships two ClusterRoles with aggregation labels (as cert-manager and
 * Crossplane do), so that the cluster's clusterrole-aggregation controller adds their
 * rules to the built-in `view`, `edit` and `admin` ClusterRoles. A namespace editor can
 * then create TrainingJobs without a grant of its own; a viewer can read them only.
 *
 * `scripts/generate-rbac.ts` writes them into the chart
 * (`templates/clusterrole-aggregated.yaml`, chart value `aggregateClusterRoles`), and
 * `deploy/rbac/` is rendered from the chart. The kinds come from src/crds.
 */

import { allCrds, catalogCrds } from "../crds/index.js";
import type { PolicyRule } from "../runtime/permissions.js";

/** A built-in user-facing ClusterRole that aggregates labelled roles. */
export type BuiltInUserRole = "view" | "edit" | "admin";

/** One aggregated ClusterRole of the chart. */
export interface AggregatedRole {
  /** Suffix of its name: `<fullname>-<suffix>`. */
  suffix: string;
  /** The built-in roles it is aggregated into (`rbac.authorization.k8s.io/aggregate-to-<role>`). */
  aggregateTo: readonly BuiltInUserRole[];
  /** Why; written beside the rules in the generated YAML. */
  reason: string;
  rules: readonly PolicyRule[];
}

/** The API group of the kinds (one group for all of them). */
const groups = [...new Set(allCrds.map((crd) => crd.group))];
/** Every kind but the catalogs, which have a role of their own. */
const plurals = allCrds.filter((crd) => !catalogCrds.includes(crd)).map((crd) => crd.plural);
/**
 * The product catalogs (cluster-scoped, written by the operator only): a role of their
 * own, aggregated into `view` like the rest, which a cluster admin may also bind
 * cluster-wide (e.g. to `system:authenticated`) so that namespace users, whose
 * RoleBindings reach no cluster-scoped kind, can read the price lists and nothing more.
 */
const catalogPlurals = catalogCrds.map((crd) => crd.plural);
/**
 * The namespaced kinds only: the cluster-scoped ServiceConnection (an account and its
 * API key) is the cluster admin's, never a namespace editor's, even where `edit` is
 * bound cluster-wide.
 */
const namespacedPlurals = allCrds.filter((crd) => crd.namespaced).map((crd) => crd.plural);

/**
 * The aggregated roles. Reading is for everyone who may read the namespace; writing the
 * objects (never their status, which is the operator's) for editors and admins.
 */
export const aggregatedRoles: readonly AggregatedRole[] = [
  {
    suffix: "view",
    aggregateTo: ["view", "edit", "admin"],
    reason: "namespace viewers (and editors, admins) read the custom resources",
    rules: [{ apiGroups: groups, resources: plurals, verbs: ["get", "list", "watch"] }],
  },
  {
    suffix: "catalog-view",
    aggregateTo: ["view", "edit", "admin"],
    reason:
      "everyone who reads the custom resources reads the product catalogs; bind it cluster-wide to let namespace users read them",
    rules: [{ apiGroups: groups, resources: catalogPlurals, verbs: ["get", "list", "watch"] }],
  },
  {
    suffix: "edit",
    aggregateTo: ["edit", "admin"],
    reason: "namespace editors and admins create, change and delete the custom resources",
    rules: [
      {
        apiGroups: groups,
        resources: namespacedPlurals,
        verbs: ["create", "update", "patch", "delete", "deletecollection"],
      },
    ],
  },
];
