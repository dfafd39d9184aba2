import { z } from "zod";
import { timestamp } from "./conditions.js";
import { described, withRules } from "./definition.js";

/**
 * What happens to the remote resource when the object is deleted. `Orphan` (the
 * default) leaves it; `Delete` deletes it where the service offers a delete operation
 * configured in the operator, and otherwise orphans it with a Warning event.
 */
export const deletionPolicy = z.enum(["Orphan", "Delete"]).default("Orphan").meta({
  description:
    "What happens to the remote resource when this object is deleted: Orphan (default) leaves it in the service; Delete deletes it where the operator has a delete operation configured, and otherwise orphans it with a Warning event.",
});
/** `Orphan` or `Delete`. */
export type DeletionPolicy = z.infer<typeof deletionPolicy>;

/**
 * `spec.exportTo`: where the operator writes the connection details a workload needs
 * (a ConfigMap of the object's namespace, owned by the object), as Crossplane's
 * writeConnectionSecretToRef; `keys` names what the kind writes.
 */
export function exportTo(keys: string, secretKeys?: string) {
  const objectName = () =>
    z
      .string()
      .min(1)
      .max(253)
      .regex(/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/);
  const configMapName = described(
    objectName(),
    "Name of the ConfigMap (same namespace) the operator writes and owns; deleted with this object. An existing ConfigMap that this object does not own is left alone.",
  );
  const meta = {
    description: `Connection details written for workloads to mount (e.g. as env): ${keys}. Values appear once the remote resource shows them and follow its changes.`,
  };
  if (!secretKeys) return z.object({ configMapName }).meta(meta);
  return z
    .object({
      configMapName: configMapName.optional(),
      secretName: described(
        objectName(),
        `Name of the Secret (same namespace) the operator writes and owns with ${secretKeys}; deleted with this object. Written only when the operator's objectStorage.exportCredentials is on and the object's connection allows it (else Synced=False CredentialsExportNotAllowed names the setting to turn on; a Secret written before is deleted when the connection stops allowing it); an existing Secret that this object does not own is left alone.`,
      ).optional(),
    })
    .meta(meta);
}

/** The management policies (Crossplane's names): what the operator may do to the remote resource. */
export const MANAGEMENT_POLICIES = [
  "Observe",
  "Create",
  "Update",
  "Delete",
  "LateInitialize",
  "*",
] as const;
/** One management policy. */
export type ManagementPolicy = (typeof MANAGEMENT_POLICIES)[number];

/**
 * What the operator may do to the object's remote resource (Crossplane's
 * `spec.managementPolicies`): `*` (the default) everything; otherwise `Observe` and any
 * of `Create`, `Update`, `Delete`, `LateInitialize`. The loop reads it once for every
 * managed kind (src/controllers/managed/decisions.ts); CEL refuses a combination
 * without `Observe` and `*` beside another policy.
 */
export const managementPolicies = withRules(
  z
    .array(z.enum(MANAGEMENT_POLICIES))
    .min(1)
    .max(MANAGEMENT_POLICIES.length)
    .meta({
      // The API server's default; the loop reads an absent list as ["*"] too (the type
      // stays optional for objects built in code).
      default: ["*"],
      "x-kubernetes-list-type": "set",
      description:
        'What the operator may do to the remote resource: ["*"] (default) everything; ["Observe"] only reads it (bind to an existing resource by its id; nothing is created, changed or deleted); add Create (order it when missing), Update (correct drift; without it drift is reported as Synced=False DriftDetected), Delete (without it deleting this object orphans the remote resource, whatever deletionPolicy says) and LateInitialize (fill unset spec fields from the remote resource). Every list names Observe, or is ["*"].',
    }),
  {
    rule: "!self.exists(p, p == '*') || self.size() == 1",
    message: 'spec.managementPolicies: "*" already means every policy; list it alone',
  },
  {
    // An empty list is refused by minItems alone.
    rule: "self.size() == 0 || self.exists(p, p == '*') || self.exists(p, p == 'Observe')",
    message:
      "spec.managementPolicies: Create, Update, Delete and LateInitialize need Observe (the operator must read a remote resource to act on it); add Observe",
  },
).optional();

/**
 * What an id of the service may look like (the same rule as SERVICE_ID_PATTERN in
 * src/service/schemas/primitives.ts, which this layer may not import; a test keeps
 * them equal): never `.` or `..`, no `/`, so an id cannot move a request to another
 * path.
 */
export const SERVICE_ID_PATTERN = /^[A-Za-z0-9_][A-Za-z0-9_.:-]{0,127}$/;

/** A spec field holding a service id: refused at apply time unless well-formed. */
export function serviceId(description: string) {
  // The lengths repeat the pattern's bounds for CEL's cost estimator, which reads no regex.
  return described(
    z.string().min(1).max(128).regex(SERVICE_ID_PATTERN),
    `${description} Letters, digits and . _ : -, starting with a letter, a digit or _.`,
  );
}

/**
 * Upper bounds of the integers of the specs, each documented in its field's
 * description (and in docs/crds.md). The service documents none; these keep every
 * value a 32-bit integer, which any service implementation accepts, and refuse
 * nonsense at apply time with a message naming the field. Status integers are bounded
 * by 2^53 - 1, the largest the operator reads exactly.
 */
export const INTEGER_LIMITS = {
  /** Nodes of a training task. */
  workerCount: 1024,
  /** A NAS capacity in GB: 1 PiB. */
  capacityGB: 1_048_576,
  /** A training task's time limit in hours: a year. */
  timeoutHours: 8760,
  /** An id the service assigns (compute centers): a 32-bit signed integer. */
  id: 2_147_483_647,
} as const;

/** The mount path rule of the service (Limits: `^[a-zA-Z0-9_/]{2,64}$`). */
export const MOUNT_PATH_PATTERN = /^[a-zA-Z0-9_/]{2,64}$/;

/** A mount path: 2 to 64 letters, digits, underscores and slashes. */
export function mountPath(description: string) {
  // The lengths repeat the pattern's bounds for CEL's cost estimator, which reads no regex.
  return described(z.string().min(2).max(64).regex(MOUNT_PATH_PATTERN), description);
}

/**
 * The name of a Kubernetes object (a DNS subdomain: lowercase alphanumerics, `-` and
 * `.`), at most `max` characters.
 */
export function objectName(description: string, max = 253) {
  return described(
    z
      .string()
      .min(1)
      .max(max)
      .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/),
    description,
  );
}

/** A reference to another object of the operator in the same namespace. */
export function localObjectReference(kind: string, description: string) {
  return z
    .object({
      name: objectName(`Name of the ${kind} in the same namespace.`),
    })
    .meta({ description });
}
/** A reference by name to an object in the same namespace. */
export type LocalObjectReference = z.infer<ReturnType<typeof localObjectReference>>;

/** A string map (e.g. environment variables): `additionalProperties: {type: string}`. */
export function stringMap(description: string, maxProperties: number, maxValueLength: number) {
  return z.record(z.string(), z.string().max(maxValueLength)).meta({ description, maxProperties });
}

/**
 * Outcome of an asynchronous create (the service's subscription-result query). Pending
 * while the service has accepted the order but not decided; Succeeded once the remote
 * resource exists; Failed when the service refused it (the message says why).
 */
export const subscriptionSchema = z
  .object({
    outcome: described(
      z.enum(["Pending", "Succeeded", "Failed"]),
      "Pending while the service processes the order, Succeeded when the remote resource exists, Failed when the service refused it.",
    ),
    message: described(
      z.string(),
      "The service's text about the outcome, e.g. why it failed.",
    ).optional(),
    submittedTime: timestamp("When the create request was accepted by the service.").optional(),
  })
  .meta({
    description:
      "Outcome of the asynchronous create, from the service's subscription-result query.",
  });
/** Outcome of an asynchronous create. */
export type Subscription = z.infer<typeof subscriptionSchema>;

/**
 * Which ServiceConnection (cluster-scoped) the object's calls to the service use: its
 * account, endpoint and API key. Every kind that calls the service has it. When
 * omitted: the connection named by the namespace's annotation
 * `aidc.io/service-connection`, else the operator's default connection. The
 * connection must allow the object's namespace. Immutable: the remote resource lives
 * in the connection's account.
 */
export const connectionRef = z
  .object({
    name: objectName("Name of the ServiceConnection (cluster-scoped)."),
  })
  .meta({
    description:
      "The ServiceConnection (the service account, endpoint and API key) this object's calls use. When omitted: the one the namespace's annotation aidc.io/service-connection names, else the operator's default connection. The connection must allow this namespace (else the terminal condition ConnectionNotAllowed and no service call). Immutable: the remote resource lives in that account.",
  })
  .optional();

/**
 * The spec fields every kind that calls the service shares: spread it into the kind's
 * spec shape (`...connectionFields`), and add `connectionRef` to the kind's immutable
 * fields with {@link CONNECTION_REF_RULE} (mutability.ts).
 */
export const connectionFields = { connectionRef };

/**
 * The spec fields every managed kind (`remote: "managed"`) shares, those the managed
 * loop reads (src/controllers/managed): spread last into the kind's spec shape
 * (`...managedSpecShape`); `connectionRef` also needs {@link CONNECTION_REF_RULE}.
 */
export const managedSpecShape = { deletionPolicy, managementPolicies, ...connectionFields };

/**
 * The name of the remote resource in the service (`what`: e.g. `volume`), 1 to 128
 * characters; the operator sends metadata.name when it is omitted. `immutable` adds
 * so to the description (the kind's mutability rules enforce it).
 */
export function serviceName(what: string, { immutable }: { immutable: boolean }) {
  return described(
    z.string().min(1).max(128),
    `Name of the ${what} in the service; metadata.name when omitted.${immutable ? " Immutable." : ""}`,
  ).optional();
}

/** The description of the remote resource, up to 1024 characters, optional. */
export function serviceDescription(description: string) {
  return described(z.string().max(1024), description).optional();
}

/**
 * A compute center id (`aidcId`), 0 to {@link INTEGER_LIMITS}.id, optional: `subject`
 * says whose, `rest` what applies to it, around the bounds (e.g. `Compute center of the
 * storage` and `; the product's when omitted. Immutable.`).
 */
export function computeCenterId(subject: string, rest = "") {
  return described(
    z.number().int().min(0).max(INTEGER_LIMITS.id),
    `${subject} (0 to ${INTEGER_LIMITS.id})${rest}`,
  ).optional();
}

/**
 * The id of an existing remote resource to adopt (`what`: e.g. `volume`) instead of
 * making one (`instead`), settable once (its FieldRule: {@link adoptedIdRule} of
 * mutability.ts).
 */
export function adoptedId(what: string, instead = "creating one") {
  return serviceId(
    `Id of an existing ${what} to adopt instead of ${instead}. May be set once on an object that has none (e.g. to resolve CreateOutcomeUnknown), never changed or removed.`,
  ).optional();
}

/** The texts of a {@link cciInstanceTarget}. */
export interface CciInstanceTargetTexts {
  /** The description of the target object. */
  description: string;
  /** The description of `cciInstanceRef`. */
  ref: string;
  /** The description of `instanceId`. */
  id: string;
  /** The error when both or neither are set. */
  message: string;
}

/**
 * A CCI instance a storage is attached to or mounted on: a CciInstance of the namespace
 * (`cciInstanceRef`, used once it is bound) or an instance id, exactly one of them.
 */
export function cciInstanceTarget(texts: CciInstanceTargetTexts) {
  return withRules(
    z
      .object({
        cciInstanceRef: localObjectReference("CciInstance", texts.ref).optional(),
        instanceId: serviceId(texts.id).optional(),
      })
      .meta({ description: texts.description }),
    { rule: "has(self.cciInstanceRef) != has(self.instanceId)", message: texts.message },
  );
}
