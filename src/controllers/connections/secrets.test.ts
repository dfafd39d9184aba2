import { describe, expect, it } from "vitest";
import type { ServiceConnection } from "../../crds/serviceconnection.js";
import { SecretRedactor } from "../../runtime/outbound-guards.js";
import { ConnectionSecrets, connectionsNaming } from "./secrets.js";

const conn = (name: string, key: string, s3?: { namespace: string; name: string }) =>
  ({
    metadata: { name },
    spec: {
      apiKeySecretRef: { namespace: "ops", name: key, key: "apiKey" },
      ...(s3
        ? { objectStorage: { endpoint: "https://s3.example", credentialsSecretRef: s3 } }
        : {}),
    },
  }) as unknown as ServiceConnection;
const secret = (namespace: string, name: string) => ({ metadata: { namespace, name } });

describe("connectionsNaming", () => {
  const all = [
    conn("a", "a-key", { namespace: "ops", name: "shared-s3" }),
    conn("b", "b-key", { namespace: "ops", name: "shared-s3" }),
    conn("c", "shared-s3"),
  ];

  it("finds the connections a Secret holds the API key or the S3 key pair of", () => {
    expect(connectionsNaming(secret("ops", "a-key"), all)).toEqual(["a"]);
    // A rotated S3 key pair rechecks the connections it serves, as a rotated API key does.
    expect(connectionsNaming(secret("ops", "shared-s3"), all)).toEqual(["a", "b", "c"]);
  });

  it("matches a Secret by namespace and name both", () => {
    expect(connectionsNaming(secret("other", "a-key"), all)).toEqual([]);
    expect(connectionsNaming(secret("ops", "unrelated"), all)).toEqual([]);
  });
});

describe("ConnectionSecrets.s3Credentials", () => {
  const b64 = (s: string) => Buffer.from(s).toString("base64");
  const pair = { accessKeyId: b64("AKIDTEMPORARY"), secretAccessKey: b64("temporary-secret-0123") };
  const reading = (data: Record<string, string>) => {
    const redactor = new SecretRedactor();
    const stored = { metadata: { namespace: "ops", name: "s3" }, data };
    const secrets = new ConnectionSecrets(() => stored, "ops", redactor);
    return { secrets, redactor };
  };
  const spec = (sessionTokenKey?: string) =>
    ({
      objectStorage: {
        endpoint: "https://s3.example",
        credentialsSecretRef: {
          namespace: "ops",
          name: "s3",
          accessKeyIdKey: "accessKeyId",
          secretAccessKeyKey: "secretAccessKey",
          ...(sessionTokenKey ? { sessionTokenKey } : {}),
        },
      },
    }) as unknown as ServiceConnection["spec"];

  it("reads the session token of temporary credentials, and keeps it redacted", () => {
    const token = "IQoJb3JpZ2luX2VjEXAMPLETOKEN0123456789";
    const { secrets, redactor } = reading({ ...pair, sessionToken: b64(token) });
    expect(secrets.s3Credentials(spec())).toEqual({
      accessKeyId: "AKIDTEMPORARY",
      secretAccessKey: "temporary-secret-0123",
      sessionToken: token,
    });
    expect(redactor.redact(`x-amz-security-token: ${token}`)).not.toContain(token);
  });

  it("reads a long-lived pair without a token when the Secret has none, or an empty one", () => {
    expect(reading(pair).secrets.s3Credentials(spec())).not.toHaveProperty("sessionToken");
    const empty = reading({ ...pair, sessionToken: "" }).secrets;
    expect(empty.s3Credentials(spec())).not.toHaveProperty("sessionToken");
  });

  it("reads the token under the key the reference names, and says when it is missing", () => {
    const { secrets } = reading({ ...pair, AWS_SESSION_TOKEN: b64("token-under-aws-name-0123") });
    expect(secrets.s3Credentials(spec("AWS_SESSION_TOKEN"))?.sessionToken).toBe(
      "token-under-aws-name-0123",
    );
    expect(() => reading(pair).secrets.s3Credentials(spec("AWS_SESSION_TOKEN"))).toThrow(
      "the Secret ops/s3 has no key AWS_SESSION_TOKEN",
    );
  });
});
