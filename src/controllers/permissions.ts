/**
 * The operator's RBAC, collected from what the registered controllers declare.
 *
 * Nothing here is written by hand: each controller declares the rules it uses, with the
 * reason, through `ControllerBuilder.permissions` (the managed kinds with
 * `managedPermissions`), and the runtime declares its own (Events, and the Lease of
 * leader election, in src/runtime/permissions.ts). {@link operatorPermissions} builds
 * the controllers of src/controllers/index.ts, as `aidc-operator run` does, once with
 * every optional feature off and once per feature on, and lists the union:
 * `scripts/generate-rbac.ts` writes it into the Helm chart
 * (`charts/aidc-operator/templates/_rbac-rules.tpl`, used by the ClusterRole and the
 * Roles of the release namespace), and `deploy/rbac/` is rendered from the chart. So the
 * chart grants exactly what the running Manager's `permissions()` reports, no more.
 *
 * A controller that starts using a new API declares it where it is built and runs
 * `npm run generate`; test/e2e/rbac.test.ts and operator-as-chart-serviceaccount.test.ts
 * prove the chart's ServiceAccount can do each rule and is enough to run the operator.
 */

import { operatorConfigSchema } from "../config/schema.js";
import { allCrds } from "../crds/index.js";
import type { ControllerDefinition } from "../runtime/controller.js";
import { createLogger } from "../runtime/logging.js";
import {
  type DeclaredRule,
  LEADER_ELECTION_PERMISSIONS,
  missingPermissions,
  type PolicyRule,
  RUNTIME_PERMISSIONS,
} from "../runtime/permissions.js";
import { ServiceClient } from "../service/client.js";
import { ServiceConnections } from "./connections/registry.js";
import { type ControllerFactory, controllers } from "./index.js";

export type { PolicyRule };

/**
 * Where a rule is granted:
 * - `watched`: in every namespace the operator watches: a ClusterRole bound cluster-wide
 *   by a ClusterRoleBinding, or, when the chart's `watchNamespaces` is set, by one
 *   RoleBinding per watched namespace.
 * - `cluster`: cluster-scoped resources (ServiceConnections, Namespaces): a ClusterRole
 *   bound cluster-wide, whatever namespaces are watched (a rule declared with
 *   `grantedIn: "cluster"`).
 * - `connectionSecrets`: Secrets, in the one namespace the operator reads connections'
 *   Secrets in (`connections.secretNamespace`, the release namespace by default), as a
 *   Role there (a rule declared with `grantedIn: "operatorNamespace"`). No rule reads a
 *   Secret anywhere else: the default connection's key is a file the kubelet mounts.
 * - `leaderElection`: in the operator's own (release) namespace only, as a Role.
 */
export type PermissionScope = "watched" | "cluster" | "connectionSecrets" | "leaderElection";

/**
 * An optional feature whose rules are granted only when it is on: `exposure` is
 * `spec.exposePorts` (operator config `trainingJob.exposure.enabled`, chart value
 * `exposure.enabled`); `credentialsExport` is a Bucket's `spec.exportTo.secretName`
 * (operator config and chart value `objectStorage.exportCredentials`), the only rule on
 * Secrets outside the connections' namespace.
 */
export type PermissionFeature = "exposure" | "credentialsExport";

/** Which optional features are on (all off by default). */
export type EnabledFeatures = Partial<Record<PermissionFeature, boolean>>;

/** One rule the operator needs, where it is granted, and why. */
export interface OperatorPermission extends DeclaredRule {
  /** Which Role or ClusterRole carries the rule (see {@link PermissionScope}). */
  scope: PermissionScope;
  /** Granted only when this feature is on (the chart wraps the rule in its value). */
  feature?: PermissionFeature;
}

/** The operator config (beyond the defaults) that switches each feature on. */
const FEATURE_CONFIG: Record<PermissionFeature, Record<string, unknown>> = {
  exposure: { trainingJob: { exposure: { enabled: true } } },
  credentialsExport: { objectStorage: { exportCredentials: true } },
};

/**
 * The registered controllers (src/controllers/index.ts), or `factories`, as `aidc-operator
 * run` builds them with the default operator config and `features` on. Building one
 * calls nothing.
 */
export function registeredControllers(
  features: EnabledFeatures = {},
  factories: readonly ControllerFactory[] = controllers,
): ControllerDefinition[] {
  const on = (Object.keys(FEATURE_CONFIG) as PermissionFeature[]).filter((f) => features[f]);
  const config = operatorConfigSchema.parse(
    Object.assign(
      {
        service: { baseUrl: "https://aidc.invalid" },
        // The chart always names the namespace of connection Secrets (its own by default).
        connections: { secretNamespace: "operator-namespace" },
      },
      ...on.map((f) => FEATURE_CONFIG[f]),
    ),
  );
  const service = new ServiceClient({
    baseUrl: config.service.baseUrl,
    apiKey: () => "",
    rateLimit: null,
  });
  try {
    const log = createLogger({ level: "silent" });
    const connections = new ServiceConnections({
      defaultClient: service,
      secretNamespace: config.connections.secretNamespace,
      newClient: () => service,
    });
    return factories.flatMap((factory) => factory({ config, connections, log }) ?? []);
  } finally {
    service.close();
  }
}

/**
 * Drops each rule that the rules kept before it and the rules after it grant already
 * (a controller reading another's kind, a rule two controllers declare), so each access
 * is listed once, with the reason of the rule that grants it most broadly.
 */
export function withoutCoveredRules<T extends PolicyRule>(rules: readonly T[]): T[] {
  const kept: T[] = [];
  rules.forEach((rule, i) => {
    if (missingPermissions([rule], [...kept, ...rules.slice(i + 1)]).length > 0) kept.push(rule);
  });
  return kept;
}

/** The scope a declared rule is granted in. */
function scopeOf(rule: DeclaredRule): PermissionScope {
  if (rule.grantedIn === "cluster") return "cluster";
  if (rule.grantedIn === "operatorNamespace") return "connectionSecrets";
  return "watched";
}

/**
 * The rules of `definitions`, in the order of their controllers (by the
 * kind each reconciles, in the order of `kindOrder`), each reason naming its controller.
 */
function controllerRules(
  definitions: readonly ControllerDefinition[],
  kindOrder: readonly string[],
  feature?: PermissionFeature,
): OperatorPermission[] {
  const rank = (d: ControllerDefinition) => kindOrder.indexOf(d.primary.kind);
  const who = (kind: string) => `${kind} controller${feature ? `, ${feature} enabled` : ""}`;
  return [...definitions]
    .sort((a, b) => rank(a) - rank(b))
    .flatMap((d) =>
      d.permissions.map((rule) => ({
        ...rule,
        scope: scopeOf(rule),
        ...(feature ? { feature } : {}),
        reason: `${who(d.primary.kind)}: ${rule.reason}`,
      })),
    );
}

/**
 * The operator's permissions from what `base` (every feature off) and `withFeature`
 * (the controllers built with one feature on) declare, and the runtime's: the
 * controllers' rules, the runtime's Events, each feature's extra rules (what its
 * controllers declare beyond `base`), then leader election. Order is the order of the
 * generated YAML.
 */
export function permissionsDeclaredBy(
  base: readonly ControllerDefinition[],
  withFeature: Partial<Record<PermissionFeature, readonly ControllerDefinition[]>>,
  kindOrder: readonly string[],
): OperatorPermission[] {
  const runtime = (rules: readonly DeclaredRule[], scope: PermissionScope) =>
    rules.map((rule) => ({ ...rule, scope }));
  const declared = controllerRules(base, kindOrder);
  const watched = withoutCoveredRules([
    ...declared.filter((r) => r.scope === "watched"),
    ...runtime(RUNTIME_PERMISSIONS, "watched"),
  ]);
  const cluster = withoutCoveredRules(declared.filter((r) => r.scope === "cluster"));
  const secrets = withoutCoveredRules(declared.filter((r) => r.scope === "connectionSecrets"));
  const features = (Object.keys(withFeature) as PermissionFeature[]).flatMap((feature) => {
    const extra = controllerRules(withFeature[feature] ?? [], kindOrder, feature).filter(
      (rule) => rule.scope === "watched" && missingPermissions([rule], watched).length > 0,
    );
    return withoutCoveredRules(extra);
  });
  return [
    ...watched,
    ...features,
    ...cluster,
    ...secrets,
    ...runtime(LEADER_ELECTION_PERMISSIONS, "leaderElection"),
  ];
}

let collected: readonly OperatorPermission[] | undefined;

/**
 * The operator's permissions: the union of what the registered controllers and the
 * runtime declare, with every feature off and each one on; the controllers' rules in
 * the order of their kinds in src/crds. The single source of the chart's and the
 * kustomize base's RBAC rules.
 */
export function operatorPermissions(): readonly OperatorPermission[] {
  collected ??= permissionsDeclaredBy(
    registeredControllers(),
    {
      exposure: registeredControllers({ exposure: true }),
      credentialsExport: registeredControllers({ credentialsExport: true }),
    },
    allCrds.map((crd) => crd.kind),
  );
  return collected;
}

/**
 * The rules of one scope with `features` on, without the bookkeeping fields: a plain
 * PolicyRule list.
 */
export function policyRules(scope: PermissionScope, features: EnabledFeatures = {}): PolicyRule[] {
  return operatorPermissions()
    .filter((p) => p.scope === scope && (!p.feature || features[p.feature] === true))
    .map(({ apiGroups, resources, verbs, resourceNames }) =>
      resourceNames
        ? { apiGroups, resources, verbs, resourceNames }
        : { apiGroups, resources, verbs },
    );
}
