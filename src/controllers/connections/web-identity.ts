/**
 * The S3 credentials of the ServiceConnections whose `spec.objectStorage.webIdentity`
 * names a role: the operator's own projected token (the file of its
 * `AWS_WEB_IDENTITY_TOKEN_FILE`) exchanged for that role's credentials by the one
 * mechanism of service/object-storage-web-identity.ts, each connection with its own
 * credentials and renewal, kept while its role, session name, STS and region stay the
 * same. Without a token file a connection gets none: its Buckets are held with
 * S3CredentialsRefused and the connection is not Ready, both saying so.
 */
import type { ConnectionWebIdentityOptions } from "../../config/object-storage.js";
import type { ServiceConnectionSpec } from "../../crds/serviceconnection.js";
import type { SecretRedactor } from "../../runtime/outbound-guards.js";
import { DEFAULT_S3_REGION } from "../../service/defaults.js";
import {
  NO_TOKEN_FILE,
  type WebIdentityCredentials,
  webIdentityCredentials,
} from "../../service/object-storage-web-identity.js";
import type { ProxyResolver } from "../../service/service-proxy.js";

/** The web identity credentials of the connections (see the module comment). */
export class ConnectionIdentities {
  private readonly built = new Map<string, { key: string; credentials: WebIdentityCredentials }>();

  /** `webIdentity`: the operator's token file and limits (none: no connection gets credentials). */
  constructor(
    private readonly options: {
      webIdentity?: ConnectionWebIdentityOptions | undefined;
      proxyFor?: ProxyResolver | undefined;
      redactor?: SecretRedactor | undefined;
    },
  ) {}

  /** The credentials of connection `name` (`spec` declares a web identity), kept or new. */
  of(name: string, spec: ServiceConnectionSpec): WebIdentityCredentials | undefined {
    const storage = spec.objectStorage;
    const wanted = storage?.webIdentity;
    if (!storage || !wanted) return undefined;
    const region = storage.region ?? DEFAULT_S3_REGION;
    const key = JSON.stringify([wanted, region]);
    const kept = this.built.get(name);
    if (kept?.key === key) return kept.credentials;
    const { webIdentity: shared, proxyFor, redactor } = this.options;
    const credentials = webIdentityCredentials({
      identity: {
        roleArn: wanted.roleArn,
        tokenFile: shared?.tokenFile ?? "",
        ...(wanted.roleSessionName ? { sessionName: wanted.roleSessionName } : {}),
        ...(wanted.stsEndpoint ? { stsEndpoint: wanted.stsEndpoint } : {}),
      },
      region,
      timeoutMs: shared?.timeoutMs ?? 10_000,
      refreshMs: shared?.refreshMs ?? 10_000,
      ...(proxyFor ? { proxyFor } : {}),
      ...(redactor ? { redactor } : {}),
    });
    this.built.set(name, { key, credentials });
    return credentials;
  }

  /** Why `spec`'s web identity cannot get credentials here; undefined when it can (or has none). */
  problemOf(spec: ServiceConnectionSpec): string | undefined {
    if (!spec.objectStorage?.webIdentity || this.options.webIdentity?.tokenFile) return undefined;
    return `spec.objectStorage.webIdentity (role ${spec.objectStorage.webIdentity.roleArn}) gets no credentials: ${NO_TOKEN_FILE}`;
  }

  /** Forgets the credentials of connection `name`. */
  forget(name: string): void {
    this.built.delete(name);
  }
}
