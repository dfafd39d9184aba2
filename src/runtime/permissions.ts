/**
 * RBAC rules as controllers declare them. Each controller declares what it uses with
 * `ControllerBuilder.permissions`, the runtime declares its own below, and these
 * declarations are the only source of the operator's RBAC:
 * src/controllers/permissions.ts collects them from the registered controllers and
 * scripts/generate-rbac.ts writes them into the chart.
 */

/** A Kubernetes RBAC PolicyRule (rbac.authorization.k8s.io/v1), resource rules only. */
export interface PolicyRule {
  /** API groups; `""` is the core group. */
  apiGroups: string[];
  /** Resources, with `/subresource` where the rule is about a subresource. */
  resources: string[];
  verbs: string[];
  /** When set, the rule applies to these object names only. */
  resourceNames?: string[];
}

/** A rule as a controller (or the runtime) declares it: the rule and why it is needed. */
export interface DeclaredRule extends PolicyRule {
  /**
   * What the rule is for, written beside it in the generated RBAC. A controller's reason
   * leaves out who needs it (the generator names the controller's kind).
   */
  reason: string;
  /**
   * Where the rule is granted, when not in the watched namespaces: `cluster` for
   * cluster-scoped resources (a ClusterRole bound cluster-wide, whatever namespaces are
   * watched), `operatorNamespace` for a Role in the one namespace the operator reads
   * its own configuration from (e.g. Secrets).
   */
  grantedIn?: "cluster" | "operatorNamespace";
}

/** What the runtime itself does in the watched namespaces: record Events. */
export const RUNTIME_PERMISSIONS: readonly DeclaredRule[] = [
  {
    apiGroups: ["events.k8s.io"],
    resources: ["events"],
    verbs: ["create", "patch"],
    reason: "every controller: Normal and Warning Events (repeats patched into a series)",
  },
];

/** What leader election does, in the Lease's namespace. */
export const LEADER_ELECTION_PERMISSIONS: readonly DeclaredRule[] = [
  {
    apiGroups: ["coordination.k8s.io"],
    resources: ["leases"],
    verbs: ["get", "create", "update"],
    reason: "runtime: leader election on a Lease in the operator's namespace",
  },
];

/**
 * Merges rule lists: one rule per (group, resource, resourceNames) with the union of
 * verbs, sorted, so the result is stable for generated files.
 */
export function mergeRules(...lists: ReadonlyArray<readonly PolicyRule[]>): PolicyRule[] {
  const byTarget = new Map<
    string,
    { group: string; resource: string; names?: string[]; verbs: Set<string> }
  >();
  for (const rule of lists.flat()) {
    for (const group of rule.apiGroups) {
      for (const resource of rule.resources) {
        const names = rule.resourceNames ? [...rule.resourceNames].sort() : undefined;
        const id = JSON.stringify([group, resource, names ?? null]);
        const entry = byTarget.get(id) ?? { group, resource, names, verbs: new Set<string>() };
        for (const v of rule.verbs) entry.verbs.add(v);
        byTarget.set(id, entry);
      }
    }
  }
  return [...byTarget.values()]
    .sort((a, b) => `${a.group}/${a.resource}`.localeCompare(`${b.group}/${b.resource}`))
    .map((e) => ({
      apiGroups: [e.group],
      resources: [e.resource],
      verbs: [...e.verbs].sort(),
      ...(e.names ? { resourceNames: e.names } : {}),
    }));
}

/**
 * The parts of `required` that `granted` does not allow, one rule per missing
 * (group, resource, verb[, names]); empty when everything is covered. A `*` in granted
 * groups, resources or verbs matches anything.
 */
export function missingPermissions(
  required: readonly PolicyRule[],
  granted: readonly PolicyRule[],
): PolicyRule[] {
  const has = (list: string[], v: string) => list.includes("*") || list.includes(v);
  const missing: PolicyRule[] = [];
  for (const rule of required) {
    for (const group of rule.apiGroups) {
      for (const resource of rule.resources) {
        for (const verb of rule.verbs) {
          const ok = granted.some(
            (g) =>
              has(g.apiGroups, group) &&
              has(g.resources, resource) &&
              has(g.verbs, verb) &&
              (!g.resourceNames ||
                (rule.resourceNames?.every((n) => g.resourceNames?.includes(n)) ?? false)),
          );
          if (!ok) {
            missing.push({
              apiGroups: [group],
              resources: [resource],
              verbs: [verb],
              ...(rule.resourceNames ? { resourceNames: rule.resourceNames } : {}),
            });
          }
        }
      }
    }
  }
  return missing;
}
