import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ServiceConnectionSpec } from "../../crds/serviceconnection.js";
import { SecretRedactor } from "../../runtime/outbound-guards.js";
import { ObjectStorageCredentialsError } from "../../service/object-storage-errors.js";
import { ConnectionIdentities } from "./web-identity.js";

const ROLE = "arn:aws:iam::111111111111:role/team-a";

const spec = (webIdentity?: { roleArn: string; stsEndpoint?: string }) =>
  ({
    baseUrl: "https://svc",
    allowInsecureHttp: false,
    apiKeySecretRef: { namespace: "ops", name: "k", key: "apiKey" },
    objectStorage: {
      endpoint: "https://s3.local",
      exportCredentials: false,
      ...(webIdentity
        ? { webIdentity }
        : { credentialsSecretRef: { namespace: "ops", name: "s3" } }),
    },
  }) as ServiceConnectionSpec;

describe("ConnectionIdentities", () => {
  let dir = "";
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "aidc-conn-identities-"));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it("keeps one exchange per connection while its role stays, a new one when it changes", () => {
    const ids = new ConnectionIdentities({
      webIdentity: { tokenFile: join(dir, "token"), timeoutMs: 1_000, refreshMs: 1_000 },
    });
    expect(ids.of("a", spec())).toBeUndefined();
    const a = ids.of("a", spec({ roleArn: ROLE }));
    expect(a?.source).toBe(`web identity (role ${ROLE}, token file ${join(dir, "token")})`);
    expect(ids.of("a", spec({ roleArn: ROLE }))).toBe(a);
    expect(ids.of("b", spec({ roleArn: ROLE }))).not.toBe(a);
    const moved = ids.of("a", spec({ roleArn: ROLE, stsEndpoint: "https://sts.local" }));
    expect(moved).not.toBe(a);
    ids.forget("a");
    expect(ids.of("a", spec({ roleArn: ROLE, stsEndpoint: "https://sts.local" }))).not.toBe(moved);
    expect(ids.problemOf(spec({ roleArn: ROLE }))).toBeUndefined();
  });

  it("reads the operator's token file for the exchange, registering the token first", async () => {
    const tokenFile = join(dir, "token-read");
    await writeFile(tokenFile, "header.claims.signature\n");
    const redactor = new SecretRedactor();
    const ids = new ConnectionIdentities({
      webIdentity: { tokenFile, timeoutMs: 200, refreshMs: 1_000 },
      redactor,
    });
    // The STS is nowhere: the exchange fails, the token is known to the redactor by then.
    const read = ids.of("a", spec({ roleArn: ROLE, stsEndpoint: "http://127.0.0.1:9" }));
    await expect(read?.read()).rejects.toThrow(/STS AssumeRoleWithWebIdentity/);
    expect(redactor.redact("sent header.claims.signature")).not.toContain("header.claims");
  });

  it("without a token file, refuses the credentials and says the connection cannot have them", async () => {
    const ids = new ConnectionIdentities({});
    const read = ids.of("a", spec({ roleArn: ROLE }));
    expect(read?.source).toBe(`web identity (role ${ROLE}, no token file)`);
    const err = await read?.read().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ObjectStorageCredentialsError);
    expect((err as Error).message).toContain("AWS_WEB_IDENTITY_TOKEN_FILE is not set");
    expect(ids.problemOf(spec({ roleArn: ROLE }))).toContain(
      `spec.objectStorage.webIdentity (role ${ROLE}) gets no credentials: the operator has no projected token to exchange`,
    );
    expect(ids.problemOf(spec())).toBeUndefined();
  });
});
