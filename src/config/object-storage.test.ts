import { mkdirSync, renameSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { defaultObjectStorage } from "./object-storage.js";
import { operatorConfigSchema } from "./schema.js";

/** readFile passes through unless a test sets `beforeRead`, which runs before each read. */
const hooks: { beforeRead?: (path: string) => Promise<void> } = {};
vi.mock("node:fs/promises", async (actual) => {
  const real = await actual<typeof import("node:fs/promises")>();
  return {
    ...real,
    readFile: async (...args: Parameters<typeof real.readFile>) => {
      await hooks.beforeRead?.(String(args[0]));
      return real.readFile(...args);
    },
  };
});

/** The default connection's S3 credentials, from the mounted Secret or the environment. */
describe("defaultObjectStorage's credentials", () => {
  let dir = "";
  afterEach(() => rm(dir, { recursive: true, force: true }));
  const config = (credentialsDir?: string) =>
    operatorConfigSchema.parse({
      service: { baseUrl: "https://api.example" },
      objectStorage: {
        endpoint: "https://s3.example",
        credentialsRefreshMs: 1,
        ...(credentialsDir ? { credentialsDir } : {}),
      },
    });
  const mounted = async (files: Record<string, string>) => {
    dir = await mkdtemp(join(tmpdir(), "aidc-s3-creds-"));
    for (const [name, text] of Object.entries(files)) await writeFile(join(dir, name), text);
    const storage = defaultObjectStorage(config(dir), {});
    if (!storage) throw new Error("no object storage");
    return storage;
  };

  it("reads the session token file of temporary credentials, and names the directory", async () => {
    const storage = await mounted({
      accessKeyId: "AKIDTEMP\n",
      secretAccessKey: "temporary-secret",
      sessionToken: "token-0123456789\n",
    });
    expect(await storage.credentials()).toEqual({
      accessKeyId: "AKIDTEMP",
      secretAccessKey: "temporary-secret",
      sessionToken: "token-0123456789",
    });
    expect(storage.source).toBe(`the files of objectStorage.credentialsDir ${dir}`);
  });

  it("reads the files of one version of a Secret volume when the kubelet swaps ..data between two reads", async () => {
    dir = await mkdtemp(join(tmpdir(), "aidc-s3-creds-"));
    const version = (name: string, files: Record<string, string>) => {
      mkdirSync(join(dir, name));
      for (const [f, text] of Object.entries(files)) writeFileSync(join(dir, name, f), text);
    };
    // The kubelet's layout: ..data names the current version, each file links through it.
    version("..v1", { accessKeyId: "AKIDOLD", secretAccessKey: "old-secret" });
    symlinkSync("..v1", join(dir, "..data"));
    for (const f of ["accessKeyId", "secretAccessKey"])
      symlinkSync(join("..data", f), join(dir, f));
    const storage = defaultObjectStorage(config(dir), {});
    // The swap happens after the first file is read, before the second.
    let reads = 0;
    hooks.beforeRead = async () => {
      if (++reads !== 2) return;
      version("..v2", { accessKeyId: "AKIDNEW", secretAccessKey: "new-secret", sessionToken: "t" });
      symlinkSync("..v2", join(dir, "..data_tmp"));
      renameSync(join(dir, "..data_tmp"), join(dir, "..data"));
    };
    try {
      expect(await storage?.credentials()).toEqual({
        accessKeyId: "AKIDOLD",
        secretAccessKey: "old-secret",
      });
    } finally {
      hooks.beforeRead = undefined;
    }
    await new Promise((r) => setTimeout(r, 5));
    expect(await storage?.credentials()).toEqual({
      accessKeyId: "AKIDNEW",
      secretAccessKey: "new-secret",
      sessionToken: "t",
    });
  });

  it("reads the new version again when the kubelet removes the one being read", async () => {
    dir = await mkdtemp(join(tmpdir(), "aidc-s3-creds-"));
    mkdirSync(join(dir, "..v1"));
    writeFileSync(join(dir, "..v1", "accessKeyId"), "AKIDOLD");
    writeFileSync(join(dir, "..v1", "secretAccessKey"), "old-secret");
    symlinkSync("..v1", join(dir, "..data"));
    const storage = defaultObjectStorage(config(dir), {});
    let reads = 0;
    hooks.beforeRead = async () => {
      if (++reads !== 2) return;
      mkdirSync(join(dir, "..v2"));
      writeFileSync(join(dir, "..v2", "accessKeyId"), "AKIDNEW");
      writeFileSync(join(dir, "..v2", "secretAccessKey"), "new-secret");
      symlinkSync("..v2", join(dir, "..data_tmp"));
      renameSync(join(dir, "..data_tmp"), join(dir, "..data"));
      rmSync(join(dir, "..v1"), { recursive: true });
    };
    try {
      expect(await storage?.credentials()).toEqual({
        accessKeyId: "AKIDNEW",
        secretAccessKey: "new-secret",
      });
    } finally {
      hooks.beforeRead = undefined;
    }
  });

  it("reads a long-lived pair without a token file, and a token written later", async () => {
    const storage = await mounted({ accessKeyId: "AKIDLONG", secretAccessKey: "long-secret" });
    expect(await storage.credentials()).not.toHaveProperty("sessionToken");
    await writeFile(join(dir, "sessionToken"), "token-later-0123");
    await new Promise((r) => setTimeout(r, 5));
    expect((await storage.credentials()).sessionToken).toBe("token-later-0123");
  });

  it("watches the files while no request reads them, and tells each change", async () => {
    const storage = await mounted({ accessKeyId: "AKIDOLD", secretAccessKey: "old-secret" });
    let changes = 0;
    const stop = storage.watch?.(() => changes++);
    await new Promise((r) => setTimeout(r, 20));
    // The first read is no change; fresh temporary credentials are.
    expect(changes).toBe(0);
    await writeFile(join(dir, "accessKeyId"), "AKIDNEW");
    await writeFile(join(dir, "sessionToken"), "token-new-0123");
    await new Promise((r) => setTimeout(r, 20));
    expect(changes).toBeGreaterThan(0);
    expect(await storage.credentials()).toMatchObject({ sessionToken: "token-new-0123" });
    stop?.();
    const seen = changes;
    await writeFile(join(dir, "accessKeyId"), "AKIDLATER");
    await new Promise((r) => setTimeout(r, 20));
    expect(changes).toBe(seen);
  });

  it("takes the token from AIDC_S3_SESSION_TOKEN beside the key pair's variables", async () => {
    const env = {
      AIDC_S3_ACCESS_KEY_ID: "AKIDENV",
      AIDC_S3_SECRET_ACCESS_KEY: "env-secret",
      AIDC_S3_SESSION_TOKEN: "env-token-0123",
    };
    const kept: string[] = [];
    const storage = defaultObjectStorage(config(), env, { keep: (source) => kept.push(source) });
    expect(await storage?.credentials()).toMatchObject({ sessionToken: "env-token-0123" });
    expect(kept).toEqual([
      "service.objectStorage.accessKeyId",
      "service.objectStorage.secretAccessKey",
      "service.objectStorage.sessionToken",
    ]);
    expect(storage?.source).toBe("AIDC_S3_ACCESS_KEY_ID and AIDC_S3_SECRET_ACCESS_KEY");
  });

  /** An STS on loopback answering AssumeRoleWithWebIdentity with `status` and `xml`. */
  const sts = async (status: number, xml: string) => {
    const server = createServer((req, res) => {
      req.resume();
      req.on("end", () => res.writeHead(status, { "content-type": "text/xml" }).end(xml));
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    return {
      url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      close: () => new Promise((r) => server.close(r)),
    };
  };
  const webIdentity = async (stsUrl: string) => {
    dir = await mkdtemp(join(tmpdir(), "aidc-s3-creds-"));
    await writeFile(join(dir, "token"), "eyJhbGciOiJSUzI1NiJ9.web-identity-token.0123");
    return {
      AWS_ROLE_ARN: "arn:aws:iam::1:role/aidc",
      AWS_WEB_IDENTITY_TOKEN_FILE: join(dir, "token"),
      AWS_ENDPOINT_URL_STS: stsUrl,
    };
  };

  it("takes web identity without keys or credentialsDir, and registers the token and the credentials STS gives", async () => {
    const answer = (f: string) => `<${f}>web-identity-${f.toLowerCase()}-0123</${f}>`;
    const server = await sts(
      200,
      `<AssumeRoleWithWebIdentityResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><AssumeRoleWithWebIdentityResult><Credentials>${answer("AccessKeyId")}${answer("SecretAccessKey")}${answer("SessionToken")}<Expiration>2099-01-01T00:00:00Z</Expiration></Credentials></AssumeRoleWithWebIdentityResult></AssumeRoleWithWebIdentityResponse>`,
    );
    try {
      const env = await webIdentity(server.url);
      const kept: string[] = [];
      const storage = defaultObjectStorage(config(), env, { keep: (source) => kept.push(source) });
      expect(storage?.source).toBe(
        `web identity (role arn:aws:iam::1:role/aidc, token file ${env.AWS_WEB_IDENTITY_TOKEN_FILE})`,
      );
      expect(await storage?.credentials()).toEqual({
        accessKeyId: "web-identity-accesskeyid-0123",
        secretAccessKey: "web-identity-secretaccesskey-0123",
        sessionToken: "web-identity-sessiontoken-0123",
      });
      expect(kept).toEqual([
        "service.objectStorage.webIdentityToken",
        "service.objectStorage.accessKeyId",
        "service.objectStorage.secretAccessKey",
        "service.objectStorage.sessionToken",
      ]);
      // The mounted Secret wins over web identity.
      expect(defaultObjectStorage(config(dir), env)?.source).toBe(
        `the files of objectStorage.credentialsDir ${dir}`,
      );
    } finally {
      await server.close();
    }
  });

  it("says a refused token is refused, naming the role and the file, never the token", async () => {
    const server = await sts(
      400,
      "<ErrorResponse><Error><Type>Sender</Type><Code>InvalidIdentityToken</Code><Message>Incorrect token audience</Message></Error><RequestId>r</RequestId></ErrorResponse>",
    );
    try {
      const env = await webIdentity(server.url);
      const err = await defaultObjectStorage(config(), env)
        ?.credentials()
        .catch((e: unknown) => e);
      expect(err).toMatchObject({ reason: "S3CredentialsRefused" });
      expect((err as Error).message).toBe(
        `STS AssumeRoleWithWebIdentity at ${server.url}: HTTP 400 InvalidIdentityToken: Incorrect token audience (web identity (role arn:aws:iam::1:role/aidc, token file ${env.AWS_WEB_IDENTITY_TOKEN_FILE}) was refused: check that the role trusts the token's issuer and audience and that the token is current; the next call reads the file again)`,
      );
      expect(JSON.stringify(err)).not.toContain("web-identity-token");
    } finally {
      await server.close();
    }
  });

  it("takes an STS that answers 5xx for a failure to retry, not a refusal", async () => {
    const server = await sts(
      503,
      "<ErrorResponse><Error><Code>ServiceUnavailable</Code><Message>busy</Message></Error></ErrorResponse>",
    );
    try {
      const env = await webIdentity(server.url);
      const err = await defaultObjectStorage(config(), env)
        ?.credentials()
        .catch((e: unknown) => e);
      expect(err).toMatchObject({ retryable: true, endpoint: "sts:AssumeRoleWithWebIdentity" });
      expect((err as Error).message).toContain(
        `STS AssumeRoleWithWebIdentity at ${server.url}: HTTP 503`,
      );
    } finally {
      await server.close();
    }
  });

  it("exchanges the token through the proxy of the STS URL, and retries when it cannot reach it", async () => {
    const closed = await sts(200, "");
    await closed.close();
    const env = await webIdentity("http://sts.aidc.test");
    const proxyFor = (url: URL) => (url.hostname === "sts.aidc.test" ? closed.url : undefined);
    const err = await defaultObjectStorage(config(), env, undefined, proxyFor)
      ?.credentials()
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ retryable: true, outcomeUnknown: false });
    expect((err as Error).message).toContain(
      `STS AssumeRoleWithWebIdentity at http://sts.aidc.test: no answer (the proxy ${closed.url} of HTTP_PROXY cannot be reached`,
    );
  });
});
