/**
 * Every Kubernetes permission the operator needs, in one place.
 *
 * Each controller (and the runtime under it) declares here what it reads and writes;
 * nothing else grants the operator anything. `scripts/generate-rbac.ts` writes these
 * rules into the Helm chart (`charts/aidc-operator/templates/_rbac-rules.tpl`, used by
 * the ClusterRole and the Roles of the release namespace), and `deploy/rbac/` is
 * rendered from the chart, so the chart and the kustomize base grant exactly this list.
 * `npm run check:generated` fails when the generated files are stale, and the e2e test
 * `test/e2e/rbac.test.ts` proves with SubjectAccessReviews that the chart's
 * ServiceAccount can do each rule and cannot read any other Secret.
 *
 * The kinds come from src/crds ({@link allCrds}), so a new kind gets its rules.
 * A controller that starts using a new API (a verb, a resource, a subresource) adds a
 * rule here, with the reason, then runs `npm run generate`.
 */

import { allCrds, type CrdDefinition } from "../crds/index.js";
import type { PolicyRule } from "../runtime/permissions.js";

export type { PolicyRule };

/**
 * Where a rule is granted:
 * - `watched`: in every namespace the operator watches: a ClusterRole bound cluster-wide
 *   by a ClusterRoleBinding, or, when the chart's `watchNamespaces` is set, by one
 *   RoleBinding per watched namespace.
 * - `leaderElection`: in the operator's own (release) namespace only, as a Role.
 *
 * No rule reads a Secret: the API key is a file the kubelet mounts from the Secret (the
 * kubelet's own authorization, not the operator's), and no code asks the API server for
 * a Secret, so the operator's ServiceAccount cannot read one, not even the key's.
 */
export type PermissionScope = "watched" | "leaderElection";

/**
 * An optional feature whose rules are granted only when it is on: `exposure` is
 * `spec.exposePorts` (operator config `trainingJob.exposure.enabled`, chart value
 * `exposure.enabled`).
 */
export type PermissionFeature = "exposure";

/** Which optional features are on (all off by default). */
export type EnabledFeatures = Partial<Record<PermissionFeature, boolean>>;

/** One rule the operator needs, where it is granted, and why. */
export interface OperatorPermission extends PolicyRule {
  /** Which Role or ClusterRole carries the rule (see {@link PermissionScope}). */
  scope: PermissionScope;
  /** Granted only when this feature is on (the chart wraps the rule in its value). */
  feature?: PermissionFeature;
  /** Who needs the rule and for what; written beside the rule in the generated YAML. */
  reason: string;
}

/** The plural names of the operator's kinds (from src/crds), in the order of their rules. */
export const RECONCILED_PLURALS: readonly string[] = allCrds.map((crd) => crd.plural);

/**
 * The three rules of a reconciled kind (as kubebuilder's markers declare them): the
 * objects (read, watch, and annotation and finalizer writes; never create or delete,
 * since the user owns the objects), the status subresource, and the finalizers
 * subresource (needed where OwnerReferencesPermissionEnforcement is on).
 */
function reconciledKindRules(crd: CrdDefinition): OperatorPermission[] {
  const { group, plural, kind: controller } = crd;
  return [
    {
      scope: "watched",
      apiGroups: [group],
      resources: [plural],
      verbs: ["get", "list", "watch", "update", "patch"],
      reason: `${controller} controller: watch the objects, write annotations and the finalizer`,
    },
    {
      scope: "watched",
      apiGroups: [group],
      resources: [`${plural}/status`],
      verbs: ["get", "update", "patch"],
      reason: `${controller} controller: write the status subresource`,
    },
    {
      scope: "watched",
      apiGroups: [group],
      resources: [`${plural}/finalizers`],
      verbs: ["update"],
      reason: `${controller} controller: set and remove the finalizer`,
    },
  ];
}

/**
 * The operator's permissions: the single source of the chart's and the kustomize
 * base's RBAC rules. Order is the order of the generated YAML.
 */
export const operatorPermissions: readonly OperatorPermission[] = [
  ...allCrds.flatMap(reconciledKindRules),
  {
    scope: "watched",
    apiGroups: ["events.k8s.io"],
    resources: ["events"],
    verbs: ["create", "patch"],
    reason: "every controller: Normal and Warning Events (repeats patched into a series)",
  },
  {
    scope: "watched",
    feature: "exposure",
    apiGroups: [""],
    resources: ["services"],
    verbs: ["list", "create", "patch", "delete"],
    reason:
      "TrainingJob controller, exposure enabled: a Service for each exposed pod port (spec.exposePorts)",
  },
  {
    scope: "watched",
    feature: "exposure",
    apiGroups: ["discovery.k8s.io"],
    resources: ["endpointslices"],
    verbs: ["list", "create", "patch", "delete"],
    reason:
      "TrainingJob controller, exposure enabled: the EndpointSlice of each exposed port's Service",
  },
  {
    scope: "leaderElection",
    apiGroups: ["coordination.k8s.io"],
    resources: ["leases"],
    verbs: ["get", "create", "update"],
    reason: "runtime: leader election on a Lease in the operator's namespace",
  },
];

/**
 * The rules of one scope with `features` on, without the bookkeeping fields: a plain
 * PolicyRule list.
 */
export function policyRules(scope: PermissionScope, features: EnabledFeatures = {}): PolicyRule[] {
  return operatorPermissions
    .filter((p) => p.scope === scope && (!p.feature || features[p.feature] === true))
    .map(({ apiGroups, resources, verbs, resourceNames }) =>
      resourceNames
        ? { apiGroups, resources, verbs, resourceNames }
        : { apiGroups, resources, verbs },
    );
}
