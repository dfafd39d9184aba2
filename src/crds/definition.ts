import type { z } from "zod";
import type { OwnReasons } from "./reasons/own.js";
import type { SharedReason } from "./reasons.js";

/** API group of every custom resource of the operator. */
export const GROUP = "aidc.io";

/** The one served and stored version of every kind. */
export const VERSION = "v1alpha1";

/**
 * One CEL validation rule, rendered as an item of `x-kubernetes-validations` on the
 * schema node it is attached to (see {@link withRules}). `self` is that node; a rule
 * that mentions `oldSelf` is a transition rule, evaluated on update only.
 */
export interface CelRule {
  /** The CEL expression; true means valid. */
  rule: string;
  /** Fixed error text. Name the field and say why. */
  message?: string;
  /** A CEL expression that evaluates to the error text (wins over `message`). */
  messageExpression?: string;
  /** Error reason reported to the client; the API server's default is FieldValueInvalid. */
  reason?:
    | "FieldValueInvalid"
    | "FieldValueForbidden"
    | "FieldValueRequired"
    | "FieldValueDuplicate";
  /** Relative JSON path (e.g. `.image`) of the field the error is reported on. */
  fieldPath?: string;
}

// GlobalMeta is declared in zod/v4/core; augmenting it types `.meta()` calls.
declare module "zod/v4/core" {
  interface GlobalMeta {
    /** CEL rules of this node; the CRD generator copies them as they are. */
    "x-kubernetes-validations"?: CelRule[];
    /** `atomic`, `set` or `map` (the latter with `x-kubernetes-list-map-keys`). */
    "x-kubernetes-list-type"?: "atomic" | "set" | "map";
    /** Keys of a `map` list; each must be required or defaulted in the items. */
    "x-kubernetes-list-map-keys"?: string[];
  }
}

/**
 * Returns `schema` with `rules` appended to its CEL rules, keeping the metadata it had
 * (zod's `.meta()` replaces metadata, so rules and descriptions must be merged).
 */
export function withRules<T extends z.ZodType>(schema: T, ...rules: CelRule[]): T {
  const meta = schema.meta() ?? {};
  const prior = meta["x-kubernetes-validations"] ?? [];
  return schema.meta({ ...meta, "x-kubernetes-validations": [...prior, ...rules] });
}

/** Returns `schema` with `description` set, keeping its other metadata. */
export function described<T extends z.ZodType>(schema: T, description: string): T {
  return schema.meta({ ...(schema.meta() ?? {}), description });
}

/**
 * A transition rule, to attach to an object, that makes its field `field` immutable:
 * it cannot be added, removed or changed once the object exists. The error, `message`,
 * is reported on the field itself. Kinds declare their immutable fields in
 * mutability.ts, which builds these rules.
 */
export function immutableField(field: string, message: string): CelRule {
  return {
    rule: `has(self.${field}) == has(oldSelf.${field}) && (!has(self.${field}) || self.${field} == oldSelf.${field})`,
    message,
    fieldPath: `.${field}`,
  };
}

/** One column of `kubectl get` (an `additionalPrinterColumns` item). */
export interface PrinterColumn {
  /** Column header, e.g. `Task-ID`. */
  name: string;
  /** OpenAPI type of the value, which sets its formatting. */
  type: "string" | "integer" | "number" | "boolean" | "date";
  /** Simple JSONPath into the object, e.g. `.status.taskId`. */
  jsonPath: string;
  /** What the column shows (`kubectl explain` and API clients). */
  description: string;
  /** 0 for the default view, 1 or more to show only with `-o wide`. */
  priority?: number;
}

/**
 * The condition columns every kind shows, as ACK and Crossplane do: READY (the Ready
 * condition; `readyMeaning` says what it means for the kind), SYNCED (the Synced
 * condition) and REASON, the reason of the first condition that is not True (the API
 * server's table shows the first match of a column's JSONPath), so that a refusal, a
 * revoked API key, a task status the operator cannot read (Ready=Unknown) or a deletion
 * policy that cannot be honoured shows in `kubectl get`.
 */
export function conditionColumns(readyMeaning: string): PrinterColumn[] {
  return [
    {
      name: "Ready",
      type: "string",
      jsonPath: '.status.conditions[?(@.type=="Ready")].status',
      description: `${readyMeaning} (the Ready condition).`,
    },
    {
      name: "Synced",
      type: "string",
      jsonPath: '.status.conditions[?(@.type=="Synced")].status',
      description: "Whether the last reconcile succeeded (the Synced condition).",
    },
    {
      name: "Reason",
      type: "string",
      jsonPath: '.status.conditions[?(@.status!="True")].reason',
      description:
        "Reason of the first condition that is not True (False or Unknown): why the object is not ready or not synced (docs/conditions.md).",
    },
  ];
}

/** How a field may change after creation. */
export type Mutability =
  /** Cannot be added, removed or changed. */
  | "immutable"
  /** May go from unset to set once, never change or be removed. */
  | "setOnce";

/** One spec field that may not change freely (see mutability.ts). */
export interface FieldRule {
  field: string;
  mutability: Mutability;
  /** Whose rule it is. */
  owner: "service" | "operator";
  /** Why, and what to do instead (completes the refusal message). */
  why: string;
}

/** A health of Argo CD that a kind's own state may decide by itself. */
export type KindHealthStatus = "Healthy" | "Degraded" | "Suspended";

/**
 * The kind's own states that decide its Argo CD health by themselves, once the status is
 * current (scripts/generate-argocd.ts writes them into the kind's health script): the
 * values of one status field, e.g. a TrainingJob's `phase` Succeeded is Healthy whatever
 * its conditions. A Degraded state's message gets the Ready condition's message added.
 */
export interface KindHealth {
  /** The status field (a string) that holds the state, e.g. `phase`. */
  field: string;
  /** The health and message of each value that decides; other values leave it to the conditions. */
  states: Readonly<Record<string, { health: KindHealthStatus; message: string }>>;
}

/**
 * Everything the generator needs to render one kind's CustomResourceDefinition. The
 * zod schemas are the source of truth; descriptions, defaults and CEL rules live in
 * their metadata. Each kind has the status subresource and is served and stored at
 * {@link VERSION}.
 */
export interface CrdDefinition<
  Spec extends z.ZodType = z.ZodType,
  Status extends z.ZodType = z.ZodType,
> {
  group: typeof GROUP;
  version: typeof VERSION;
  kind: string;
  /**
   * True for every kind the users' objects are of; false for ServiceConnection, which is
   * cluster-scoped (also makes the definition a runtime ResourceDescriptor).
   */
  namespaced: boolean;
  /** Lower-case plural; also the first label of the CRD's name `<plural>.<group>`. */
  plural: string;
  singular: string;
  shortNames: string[];
  categories: string[];
  /** Top-level description of the kind, shown by `kubectl explain <kind>`. */
  description: string;
  spec: Spec;
  status: Status;
  printerColumns: PrinterColumn[];
  /**
   * How the operator treats the kind's remote resource: `managed`, the generic managed
   * loop (src/controllers/managed) drives it; `observed`, its own controller observes it
   * (CciInstance); `none`, its objects name no remote resource (ServiceConnection). The
   * objects of a `managed` or `observed` kind call the service: the reason table's
   * "service kinds" rows apply to them, and its "managed kinds" rows to `managed` ones.
   */
  remote: "managed" | "observed" | "none";
  /** The spec fields that may not change freely (the CRD's transition rules, docs/crds.md). */
  mutability: readonly FieldRule[];
  /** The condition reasons only this kind writes (`ownReasons` of reasons/own.ts), if any. */
  reasons?: OwnReasons;
  /**
   * The rows of the shared table that apply to the kinds that join them (e.g.
   * `Available`, `Resolved`) which this kind writes: the kind joins them from here, with
   * no edit of the shared table (rows of a group, e.g. "managed kinds", apply by `remote`).
   */
  sharedReasons?: readonly SharedReason[];
  /** Its own states that decide its Argo CD health, if any. */
  health?: KindHealth;
}

/**
 * The metadata fields the operator reads (a subset of ObjectMeta, structurally
 * compatible with the runtime's `ObjectMeta`).
 */
export interface CustomResourceMeta {
  name?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  finalizers?: string[];
}

/** A whole object of one of the operator's kinds, as the API server returns it. */
export interface CustomResource<Spec, Status> {
  apiVersion: string;
  kind: string;
  metadata: CustomResourceMeta;
  spec: Spec;
  status?: Status;
}
