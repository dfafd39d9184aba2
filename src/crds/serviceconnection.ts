import { z } from "zod";
import { kindColumns, statusColumn } from "./columns.js";
import { timestamp } from "./conditions.js";
import {
  type CrdDefinition,
  type CustomResource,
  described,
  GROUP,
  VERSION,
  withRules,
} from "./definition.js";
import { objectName } from "./fields.js";
import { ownReason, ownReasons } from "./reasons/own.js";
import { httpUrl, objectStorageSchema, secretKey } from "./serviceconnection-storage.js";
import { kindStatus, managedStatusShape } from "./status-fields.js";

/**
 * ServiceConnection (`svcconn`, cluster-scoped): one account of the Compute and Storage
 * Service: its base URL, the Secret holding its API key, its client limits, its object
 * storage endpoint with the S3 credentials Secret, and the namespaces whose objects may
 * use it. Objects pick one with `spec.connectionRef`, else their namespace's
 * {@link CONNECTION_ANNOTATION}, else the operator's default connection (its config).
 */

/**
 * The namespace annotation naming the ServiceConnection that the namespace's objects
 * use when they name none in `spec.connectionRef`.
 */
export const CONNECTION_ANNOTATION = "aidc.io/service-connection";

/** The condition reasons of a ServiceConnection's own state (reasons.ts has the shared ones). */
export const SERVICE_CONNECTION_REASONS = ownReasons({
  Connected: ownReason(
    "Ok",
    ["Ready"],
    "The service accepted an authenticated call with the connection's API key.",
  ),
  SecretUnreadable: ownReason(
    "Terminal",
    ["Ready"],
    "The connection's Secret cannot be read: it does not exist, lacks the key, or is outside the one namespace the operator reads Secrets in (chart value connections.secretNamespace).",
    "Fix the Secret or the reference; checked again when it changes.",
  ),
  WebIdentityUnavailable: ownReason(
    "Terminal",
    ["Ready"],
    "The connection's spec.objectStorage.webIdentity gets no credentials: the operator has no projected token (AWS_WEB_IDENTITY_TOKEN_FILE is not set). Its Buckets are held with S3CredentialsRefused saying the same.",
    "Give the operator a projected token (chart value objectStorage.webIdentity.projectToken or roleArn, or the EKS role annotation on its ServiceAccount), or name a credentialsSecretRef instead.",
  ),
  CheckRefused: {
    ...ownReason(
      "Terminal",
      ["Ready"],
      "The service refused the authenticated check call for a reason other than the key: a redirect, no such operation at the base URL's path, or a refusal (the message has the answer).",
      "Set spec.baseUrl to the address the service's API answers on (a proxy or gateway in the way shows in the message).",
    ),
    operator:
      "Makes the check call again every poll (Stalled=True meanwhile); the condition goes once the service answers it.",
  },
  ServiceUnreachable: ownReason(
    "UnderWay",
    ["Ready"],
    "The Ready check of the connection failed for a passing reason (network, 5xx, 429, timeout); the message has the error. Checked again every poll.",
  ),
  InUse: ownReason(
    "UnderWay",
    ["Ready"],
    "The connection is being deleted but objects still use it; the message counts them and names a few. It keeps its finalizer until they are gone (as Crossplane's ProviderConfigUsage).",
  ),
});

/**
 * The key of an API-key Secret's data that holds the key, unless told otherwise: a
 * ServiceConnection's default, the chart's `apiKeySecret.key` and every command of the
 * docs (test/unit/secret-key-names.test.ts keeps them one name).
 */
export const API_KEY_SECRET_KEY = "apiKey";

/** Where the API key of a connection is: one key of one Secret. */
export const apiKeySecretRefSchema = z
  .object({
    namespace: objectName(
      "Namespace of the Secret. The operator reads Secrets in one namespace only (its own by default; chart value connections.secretNamespace): a Secret elsewhere is reported, not read.",
      63,
    ),
    name: objectName("Name of the Secret."),
    key: secretKey("Key in the Secret's data that holds the API key.").default(API_KEY_SECRET_KEY),
  })
  .meta({ description: "The Secret key that holds the API key of this account." });

/** Client limits of one account. */
export const connectionLimitsSchema = z
  .object({
    ratePerSecond: described(
      z.number().gt(0).max(10_000),
      "Requests per second this connection sends at most (a token bucket), over 0 and at most 10000.",
    ),
    burst: described(
      z.number().int().min(1).max(10_000),
      "Requests this connection may send at once after a quiet period, 1 to 10000.",
    ),
  })
  .meta({
    description:
      "The client-side rate limit of this account; the operator's service.rateLimit when omitted. Each connection has a limiter of its own, so one account's load never delays another's.",
  });

/** A Kubernetes label selector (metav1.LabelSelector). */
export const labelSelectorSchema = z
  .object({
    matchLabels: z
      .record(z.string(), z.string().max(63))
      .meta({ description: "Labels a namespace must carry, all of them.", maxProperties: 64 })
      .optional(),
    matchExpressions: z
      .array(
        z.object({
          key: described(z.string().min(1).max(317), "The label key."),
          operator: described(
            z.enum(["In", "NotIn", "Exists", "DoesNotExist"]),
            "In, NotIn, Exists or DoesNotExist.",
          ),
          values: z
            .array(z.string().max(63))
            .max(64)
            .meta({ description: "Values for In and NotIn; empty for Exists and DoesNotExist." })
            .optional(),
        }),
      )
      .max(16)
      .meta({ description: "Requirements on a namespace's labels, all of them." })
      .optional(),
  })
  .meta({ description: "A label selector on namespaces (metav1.LabelSelector)." });
/** A label selector. */
export type LabelSelector = z.infer<typeof labelSelectorSchema>;

/** Which namespaces may use a connection. */
export const allowedNamespacesSchema = z
  .object({
    names: z
      .array(
        described(
          z
            .string()
            .min(1)
            .max(63)
            .regex(/^(\*|[a-z0-9]([-a-z0-9]*[a-z0-9])?)$/),
          "A namespace name, or * for every namespace.",
        ),
      )
      .max(256)
      .meta({ description: "Namespaces allowed by name; * allows every namespace." })
      .optional(),
    selector: labelSelectorSchema.optional(),
  })
  .meta({
    description:
      "The namespaces whose objects may use this connection: listed by name, or matched by the label selector (either suffices). Omitted or empty: no namespace may use it. An object of another namespace that names it gets the terminal condition ConnectionNotAllowed and no service call is made.",
  });

/** Desired state of a ServiceConnection. */
export const ServiceConnectionSpec = withRules(
  z
    .object({
      baseUrl: httpUrl(
        "{base_url} of the service API for this account, e.g. https://api.example.com.",
      ),
      allowInsecureHttp: described(
        z.boolean(),
        "Allows a plain http:// baseUrl, which sends the API key unencrypted: a local emulator or playground only.",
      ).default(false),
      apiKeySecretRef: apiKeySecretRefSchema,
      limits: connectionLimitsSchema.optional(),
      objectStorage: objectStorageSchema.optional(),
      allowedNamespaces: allowedNamespacesSchema.optional(),
    })
    .meta({
      description:
        "One account of the Compute and Storage Service. Every field may change; objects already using the connection use the new settings at their next reconcile.",
    }),
  {
    rule: "self.allowInsecureHttp || self.baseUrl.startsWith('https://')",
    message:
      "baseUrl must be https:// (the API key would travel unencrypted); set allowInsecureHttp: true for a local emulator only",
    fieldPath: ".baseUrl",
  },
);
/** Desired state of a ServiceConnection, with the CRD's defaults applied. */
export type ServiceConnectionSpec = z.infer<typeof ServiceConnectionSpec>;

/** Observed state of a ServiceConnection. */
export const ServiceConnectionStatus = kindStatus("the connection", {
  objectsUsing: described(
    z.number().int().min(0),
    "How many objects of the operator's kinds use this connection (by spec.connectionRef or their namespace's annotation); with shards, only the objects without the label aidc.io/shard (each shard holds the connection with a finalizer of its own). The connection cannot be deleted while any does.",
  ).optional(),
  lastCheckedTime: timestamp(
    "When the operator last made an authenticated call with this connection's key (the Ready check).",
  ).optional(),
  ...managedStatusShape,
});
/** Observed state of a ServiceConnection. */
export type ServiceConnectionStatus = z.infer<typeof ServiceConnectionStatus>;

/** A whole ServiceConnection object. */
export type ServiceConnection = CustomResource<ServiceConnectionSpec, ServiceConnectionStatus>;

/** The ServiceConnection kind (`svcconn`, cluster-scoped). */
export const serviceConnectionCrd: CrdDefinition<
  typeof ServiceConnectionSpec,
  typeof ServiceConnectionStatus
> = {
  group: GROUP,
  version: VERSION,
  kind: "ServiceConnection",
  remote: "none",
  mutability: [],
  reasons: SERVICE_CONNECTION_REASONS,
  namespaced: false,
  plural: "serviceconnections",
  singular: "serviceconnection",
  shortNames: ["svcconn"],
  categories: ["aidc"],
  description: `One account of the Compute and Storage Service (cluster-scoped): base URL, API key Secret, client limits, object storage endpoint and S3 credentials, and the namespaces allowed to use it. An object uses spec.connectionRef, else the connection its namespace names in the annotation ${CONNECTION_ANNOTATION}, else the operator's default connection (its configuration). Ready when an authenticated call with the key succeeds; a connection in use cannot be deleted until its objects are gone.`,
  spec: ServiceConnectionSpec,
  status: ServiceConnectionStatus,
  printerColumns: kindColumns({
    shown: [
      {
        name: "Base-URL",
        type: "string",
        jsonPath: ".spec.baseUrl",
        description: "Base URL of the service for this account.",
      },
      statusColumn("Objects", "integer", "objectsUsing", "Objects using this connection."),
    ],
    readyMeaning: "Whether the service accepts the connection's API key",
  }),
};
