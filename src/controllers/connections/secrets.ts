/**
 * The Secrets of the connections, read from the watch cache of the one namespace the
 * operator reads Secrets in: every value trimmed, registered with the redactor before
 * anyone can send it, and every problem said without the value.
 */
import type { ServiceConnection, ServiceConnectionSpec } from "../../crds/serviceconnection.js";
import type { SecretRedactor } from "../../runtime/outbound-guards.js";
import type { DeclaredRule } from "../../runtime/permissions.js";
import type { KubeObject, ResourceDescriptor } from "../../runtime/resource.js";
import type { S3Credentials } from "../../service/object-storage-types.js";

/** Core Secrets (read only in the namespace of `connections.secretNamespace`). */
export const SECRETS: ResourceDescriptor = {
  group: "",
  version: "v1",
  plural: "secrets",
  kind: "Secret",
  namespaced: true,
};

/**
 * The rule of a controller that watches {@link SECRETS}: read them in `secretNamespace`,
 * the one namespace the operator reads Secrets in (no rule without one).
 */
export function secretRules(secretNamespace: string | undefined): DeclaredRule[] {
  if (!secretNamespace) return [];
  return [
    {
      apiGroups: [""],
      resources: ["secrets"],
      verbs: ["get", "list", "watch"],
      reason:
        "read the API keys and S3 credentials connections name, in the one namespace of connections.secretNamespace",
      grantedIn: "operatorNamespace",
    },
  ];
}

/** The key of a connection's S3 session token when its Secret reference names none. */
export const DEFAULT_SESSION_TOKEN_KEY = "sessionToken";

/** A Secret as the cache has it. */
type SecretObject = KubeObject & { data?: Record<string, string> };

/** Reads connections' Secrets; see the module comment. */
export class ConnectionSecrets {
  /**
   * `lookup` reads a cached Secret (undefined when absent); `readable` is the one
   * namespace whose Secrets may be read (undefined: none).
   */
  constructor(
    private readonly lookup: (namespace: string, name: string) => KubeObject | undefined,
    private readonly readable: string | undefined,
    private readonly redactor: SecretRedactor | undefined,
  ) {}

  /**
   * Why the Secrets of `spec` cannot be read (a message), or undefined when the API key
   * and, if declared, the S3 credentials are all there. Never includes a value.
   */
  problemOf(spec: ServiceConnectionSpec): string | undefined {
    try {
      this.apiKey(spec);
      this.s3Credentials(spec);
      return undefined;
    } catch (err) {
      return (err as Error).message;
    }
  }

  /** The resourceVersions of the Secrets `spec` names (a change means a new key). */
  versionsOf(spec: ServiceConnectionSpec): string {
    const refs = [spec.apiKeySecretRef, spec.objectStorage?.credentialsSecretRef];
    return refs
      .map((r) =>
        r && r.namespace === this.readable
          ? (this.lookup(r.namespace, r.name)?.metadata?.resourceVersion ?? "-")
          : "-",
      )
      .join("/");
  }

  /** The API key `spec` names; throws saying what is missing. */
  apiKey(spec: ServiceConnectionSpec): string {
    const ref = spec.apiKeySecretRef;
    return this.value(ref.namespace, ref.name, ref.key);
  }

  /**
   * The S3 credentials `spec` names (undefined: it declares no object storage), with the
   * session token when the Secret has one; throws saying what is missing.
   */
  s3Credentials(spec: ServiceConnectionSpec | undefined): S3Credentials | undefined {
    const ref = spec?.objectStorage?.credentialsSecretRef;
    if (!ref) return undefined;
    const { namespace, name } = ref;
    const tokenKey = ref.sessionTokenKey ?? DEFAULT_SESSION_TOKEN_KEY;
    const hasToken =
      ref.sessionTokenKey !== undefined ||
      Boolean((this.lookup(namespace, name) as SecretObject | undefined)?.data?.[tokenKey]);
    return {
      accessKeyId: this.value(namespace, name, ref.accessKeyIdKey),
      secretAccessKey: this.value(namespace, name, ref.secretAccessKeyKey),
      ...(hasToken ? { sessionToken: this.value(namespace, name, tokenKey) } : {}),
    };
  }

  /**
   * One value of a Secret, trimmed and kept by the redactor as the current value of that
   * Secret's key; throws saying what is missing.
   */
  value(namespace: string, name: string, key: string): string {
    const readable = this.readable;
    if (!readable) {
      throw new Error(
        `the operator reads no Secrets (set connections.secretNamespace; the chart sets it to its namespace), so the Secret ${namespace}/${name} cannot be read`,
      );
    }
    if (namespace !== readable) {
      throw new Error(
        `the Secret ${namespace}/${name} is outside ${readable}, the one namespace the operator reads Secrets in (connections.secretNamespace)`,
      );
    }
    const secret = this.lookup(namespace, name) as SecretObject | undefined;
    if (!secret) throw new Error(`the Secret ${namespace}/${name} does not exist`);
    const encoded = secret.data?.[key];
    if (encoded === undefined) throw new Error(`the Secret ${namespace}/${name} has no key ${key}`);
    const value = Buffer.from(encoded, "base64").toString("utf8").trim();
    if (!value) throw new Error(`the key ${key} of the Secret ${namespace}/${name} is empty`);
    this.redactor?.keep(`Secret ${namespace}/${name} ${key}`, value);
    return value;
  }
}

/** The names of the `connections` that name `secret` (for their key or their S3 credentials). */
export function connectionsNaming(secret: KubeObject, connections: ServiceConnection[]): string[] {
  const { namespace, name } = secret.metadata ?? {};
  return connections
    .filter((c) =>
      [c.spec.apiKeySecretRef, c.spec.objectStorage?.credentialsSecretRef].some(
        (r) => r?.namespace === namespace && r?.name === name,
      ),
    )
    .map((c) => c.metadata.name ?? "");
}
