/**
 * Which service connection an object uses, and whether its namespace may: pure
 * decisions over the object, its namespace and the connection (docs/controllers.md,
 * ServiceConnection). Order: the object's `spec.connectionRef`, else its namespace's
 * annotation {@link CONNECTION_ANNOTATION}, else the operator's default connection
 * (its configuration), which every namespace may use.
 *
 * The same choice gives an object's `connection` label in the object-health metrics
 * (`aidc_managed_resources`, {@link connectionMetricLabel}): a name that no
 * ServiceConnection has becomes {@link MISSING_CONNECTION_LABEL}, so that the label
 * takes as many values as there are connections, whatever users write.
 */
import {
  CONNECTION_ANNOTATION,
  type LabelSelector,
  type ServiceConnectionSpec,
  serviceConnectionCrd,
} from "../../crds/serviceconnection.js";
import { DEFAULT_CONNECTION_LABEL } from "../../runtime/metrics.js";
import type { KubeObject, ResourceDescriptor } from "../../runtime/resource.js";

/** Core Namespaces (their connection annotation and their labels). */
export const NAMESPACES: ResourceDescriptor = {
  group: "",
  version: "v1",
  plural: "namespaces",
  kind: "Namespace",
  namespaced: false,
};

/** Which connection an object asks for, and where it was named. */
export type ConnectionChoice =
  | { kind: "default" }
  | { kind: "named"; name: string; source: "connectionRef" | "namespace annotation" };

/** What the choice needs to know of a namespace. */
export interface NamespaceFacts {
  name: string;
  labels?: Record<string, string> | undefined;
  annotations?: Record<string, string> | undefined;
}

/** What the choice reads of an object: its namespace and `spec.connectionRef`. */
export interface ConnectionUser {
  readonly metadata?: { readonly namespace?: string };
  readonly spec?: unknown;
}

/** The connection `obj` asks for: its connectionRef, else its namespace's annotation, else the default. */
export function chooseConnection(
  obj: ConnectionUser,
  namespace: NamespaceFacts | undefined,
): ConnectionChoice {
  const spec = (obj as { spec?: { connectionRef?: { name?: unknown } } }).spec;
  const ref = spec?.connectionRef?.name;
  if (typeof ref === "string" && ref.length > 0) {
    return { kind: "named", name: ref, source: "connectionRef" };
  }
  const annotated = namespace?.annotations?.[CONNECTION_ANNOTATION]?.trim();
  if (annotated) return { kind: "named", name: annotated, source: "namespace annotation" };
  return { kind: "default" };
}

/** True when `labels` satisfy `selector` (metav1.LabelSelector; an empty selector matches all). */
export function selectorMatches(
  selector: LabelSelector,
  labels: Record<string, string> | undefined,
): boolean {
  const have = labels ?? {};
  for (const [k, v] of Object.entries(selector.matchLabels ?? {})) if (have[k] !== v) return false;
  for (const e of selector.matchExpressions ?? []) {
    const value = have[e.key];
    const values = e.values ?? [];
    const ok =
      e.operator === "In"
        ? value !== undefined && values.includes(value)
        : e.operator === "NotIn"
          ? value === undefined || !values.includes(value)
          : e.operator === "Exists"
            ? value !== undefined
            : value === undefined;
    if (!ok) return false;
  }
  return true;
}

/**
 * True when the connection's `allowedNamespaces` lets `namespace` use it: listed by
 * name (or `*`), or matched by the selector. Nothing listed and no selector: none.
 */
export function namespaceAllowed(
  spec: Pick<ServiceConnectionSpec, "allowedNamespaces">,
  namespace: NamespaceFacts,
): boolean {
  const allowed = spec.allowedNamespaces;
  if (!allowed) return false;
  const names = allowed.names ?? [];
  if (names.includes("*") || names.includes(namespace.name)) return true;
  return allowed.selector !== undefined && selectorMatches(allowed.selector, namespace.labels);
}

/** The message of a refused connection: what the object named, where, and how to go on. */
export function notAllowedMessage(
  choice: ConnectionChoice & { kind: "named" },
  ns: string,
): string {
  return `the ServiceConnection ${choice.name} (named by the ${choice.source}) does not allow namespace ${ns} in spec.allowedNamespaces; nothing is sent to the service. Name a connection this namespace may use, or have the connection allow it`;
}

/** The message of a connection that does not exist. */
export function notFoundMessage(choice: ConnectionChoice & { kind: "named" }): string {
  return `the ServiceConnection ${choice.name} (named by the ${choice.source}) does not exist; nothing is sent to the service until it does`;
}

/** The label of objects that name a ServiceConnection that does not exist. */
export const MISSING_CONNECTION_LABEL = "_missing";

/**
 * The label function: a ServiceConnection is labelled with its own name; any other
 * object with the name of the connection it uses when `connections` has it cached; no
 * object (a key the cache has not) with the default connection's.
 */
export function connectionMetricLabel(connections: {
  chosenName(obj: KubeObject): string | undefined;
  connectionObject(name: string): object | undefined;
}): (obj: KubeObject | undefined) => string {
  return (obj) => {
    if (obj === undefined) return DEFAULT_CONNECTION_LABEL;
    if (obj.kind === serviceConnectionCrd.kind)
      return obj.metadata?.name ?? MISSING_CONNECTION_LABEL;
    const name = connections.chosenName(obj);
    if (name === undefined) return DEFAULT_CONNECTION_LABEL;
    return connections.connectionObject(name) ? name : MISSING_CONNECTION_LABEL;
  };
}
