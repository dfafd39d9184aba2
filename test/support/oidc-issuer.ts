/**
 * A local OIDC issuer for MinIO's STS AssumeRoleWithWebIdentity, as a cluster's service
 * account issuer is one for an STS: its discovery document
 * (`/.well-known/openid-configuration`) and its keys (`/jwks`) on loopback, and JWTs
 * signed with node:crypto (RS256), as the kubelet's projected tokens are. MinIO reads
 * the document at start: {@link minioOpenIdEnv} gives a server started after the issuer.
 */
import { createHash, generateKeyPairSync, type KeyObject, randomBytes, sign } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/** The audience (MinIO's client id) of the tokens. */
export const TOKEN_AUDIENCE = "aidc-operator";

const b64url = (data: string | Buffer) => Buffer.from(data).toString("base64url");

/** A running issuer. */
export class OidcIssuer {
  url = "";
  private server?: Server;
  private readonly key = generateKeyPairSync("rsa", { modulusLength: 2048 });
  private readonly kid = randomBytes(6).toString("hex");

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      const body =
        req.url === "/.well-known/openid-configuration"
          ? {
              issuer: this.url,
              jwks_uri: `${this.url}/jwks`,
              authorization_endpoint: `${this.url}/authorize`,
              token_endpoint: `${this.url}/token`,
              response_types_supported: ["id_token"],
              subject_types_supported: ["public"],
              id_token_signing_alg_values_supported: ["RS256"],
            }
          : req.url === "/jwks"
            ? {
                keys: [
                  {
                    ...this.key.publicKey.export({ format: "jwk" }),
                    kid: this.kid,
                    alg: "RS256",
                    use: "sig",
                  },
                ],
              }
            : undefined;
      res.writeHead(body ? 200 : 404, { "content-type": "application/json" });
      res.end(body ? JSON.stringify(body) : "");
    });
    await new Promise<void>((resolve) => this.server?.listen(0, "127.0.0.1", resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  /**
   * A token of `subject` valid `lifetimeS` seconds whose `policy` claim names MinIO's
   * policy of its credentials; `foreign`: signed by a key the issuer does not publish;
   * `audience`: its `aud` (default {@link TOKEN_AUDIENCE}).
   */
  token(
    subject: string,
    lifetimeS: number,
    options: { policy?: string; foreign?: boolean; audience?: string | string[] } = {},
  ): string {
    const now = Math.floor(Date.now() / 1000);
    const header = { alg: "RS256", typ: "JWT", kid: this.kid };
    const claims = {
      iss: this.url,
      sub: subject,
      aud: options.audience ?? TOKEN_AUDIENCE,
      iat: now,
      exp: now + lifetimeS,
      policy: options.policy ?? "readwrite",
      // Two tokens made in one second differ, as the kubelet's do.
      jti: randomBytes(8).toString("hex"),
    };
    const signed = `${b64url(JSON.stringify(header))}.${b64url(JSON.stringify(claims))}`;
    const key: KeyObject = options.foreign
      ? generateKeyPairSync("rsa", { modulusLength: 2048 }).privateKey
      : this.key.privateKey;
    return `${signed}.${b64url(sign("sha256", Buffer.from(signed), key))}`;
  }

  stop(): Promise<void> {
    this.server?.closeAllConnections();
    return new Promise((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}

/** MinIO's settings to trust `issuer`, its tokens' `policy` claim naming their policy. */
export function minioOpenIdEnv(issuer: OidcIssuer): Record<string, string> {
  return {
    MINIO_IDENTITY_OPENID_CONFIG_URL: `${issuer.url}/.well-known/openid-configuration`,
    MINIO_IDENTITY_OPENID_CLIENT_ID: TOKEN_AUDIENCE,
    MINIO_IDENTITY_OPENID_CLAIM_NAME: "policy",
  };
}

/**
 * MinIO's settings to trust `issuer` once per role, as an IAM role trusts a cluster's
 * issuer: each key of `roles` a provider whose client id (the audience a token must
 * carry) is `clientId` and whose credentials get the MinIO policy `policy`, whatever the
 * token claims. Its role ARN is {@link minioRoleArn} of that client id.
 */
export function minioRolesEnv(
  issuer: OidcIssuer,
  roles: Record<string, { clientId: string; policy: string }>,
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, { clientId, policy }] of Object.entries(roles)) {
    env[`MINIO_IDENTITY_OPENID_CONFIG_URL_${key}`] =
      `${issuer.url}/.well-known/openid-configuration`;
    env[`MINIO_IDENTITY_OPENID_CLIENT_ID_${key}`] = clientId;
    env[`MINIO_IDENTITY_OPENID_ROLE_POLICY_${key}`] = policy;
  }
  return env;
}

/** The ARN MinIO gives the role of a provider of `clientId` (its openid.go: a SHA-1 of the id). */
export function minioRoleArn(clientId: string, region = "us-east-1"): string {
  const id = createHash("sha1").update(clientId).digest("base64url");
  return `arn:minio:iam:${region}::role/${id}`;
}
