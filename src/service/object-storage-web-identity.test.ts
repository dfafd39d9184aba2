import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { ObjectStorageCredentialsError } from "./object-storage-errors.js";
import {
  type ExchangedCredentials,
  RENEW_BEFORE_MS,
  webIdentityCredentials,
  webIdentityOf,
} from "./object-storage-web-identity.js";

/** When web identity's credentials are exchanged, kept and dropped (a fake exchange). */
describe("webIdentityCredentials", () => {
  let dir = "";
  let file = "";
  /** The tokens exchanged, in order; each answer lives `lifeMs`. */
  let exchanged: string[] = [];
  let lifeMs = 3_600_000;
  /** When set, each exchange fails with it (STS down). */
  let failure: Error | undefined;
  const exchange = async (token: string): Promise<ExchangedCredentials> => {
    exchanged.push(token);
    if (failure) throw failure;
    const n = exchanged.length;
    return {
      accessKeyId: `AKID${n}`,
      secretAccessKey: `secret-${n}`,
      sessionToken: `session-${n}`,
      expiration: new Date(Date.now() + lifeMs),
    };
  };
  const reader = () =>
    webIdentityCredentials({
      identity: { roleArn: "arn:aws:iam::1:role/r", tokenFile: file },
      region: "us-east-1",
      timeoutMs: 1_000,
      refreshMs: 5,
      exchange,
    });
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "aidc-web-identity-"));
    file = join(dir, "token");
    exchanged = [];
    lifeMs = 3_600_000;
    failure = undefined;
    await writeFile(file, "token-one-0123456789\n");
  });
  afterEach(async () => {
    vi.useRealTimers();
    await rm(dir, { recursive: true, force: true });
  });

  it("keeps the credentials until RENEW_BEFORE_MS before they expire, and coalesces the reads of one exchange", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    const creds = reader();
    const [a, b] = await Promise.all([creds.read(), creds.read()]);
    expect(a).toEqual({
      accessKeyId: "AKID1",
      secretAccessKey: "secret-1",
      sessionToken: "session-1",
    });
    expect(b).toBe(a);
    vi.setSystemTime(Date.now() + lifeMs - RENEW_BEFORE_MS - 1_000);
    expect(await creds.read()).toBe(a);
    vi.setSystemTime(Date.now() + 2_000);
    expect((await creds.read()).accessKeyId).toBe("AKID2");
    expect(exchanged).toEqual(["token-one-0123456789", "token-one-0123456789"]);
  });

  it("serves the kept credentials while renewals fail, trying again every 10 s, until 30 s before they expire", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    const creds = reader();
    const start = Date.now();
    await creds.read();
    failure = new Error("STS unavailable");
    vi.setSystemTime(start + lifeMs - RENEW_BEFORE_MS + 1_000);
    expect((await creds.read()).accessKeyId).toBe("AKID1");
    expect((await creds.read()).accessKeyId).toBe("AKID1");
    expect(exchanged).toHaveLength(2);
    vi.setSystemTime(Date.now() + 10_001);
    expect((await creds.read()).accessKeyId).toBe("AKID1");
    expect(exchanged).toHaveLength(3);
    vi.setSystemTime(start + lifeMs - 29_000);
    await expect(creds.read()).rejects.toThrow("STS unavailable");
    failure = undefined;
    expect((await creds.read()).accessKeyId).toBe("AKID5");
  });

  it("renews credentials shorter-lived than twice the window at half their life", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    lifeMs = 40_000;
    const creds = reader();
    await creds.read();
    vi.setSystemTime(Date.now() + 19_000);
    expect((await creds.read()).accessKeyId).toBe("AKID1");
    vi.setSystemTime(Date.now() + 2_000);
    expect((await creds.read()).accessKeyId).toBe("AKID2");
  });

  it("exchanges the token again after the storage refused the credentials it gave", async () => {
    const creds = reader();
    expect((await creds.read()).accessKeyId).toBe("AKID1");
    expect((await creds.read()).accessKeyId).toBe("AKID1");
    creds.refused();
    expect((await creds.read()).accessKeyId).toBe("AKID2");
    expect(exchanged).toEqual(["token-one-0123456789", "token-one-0123456789"]);
  });

  it("drops the credentials of a token the kubelet rewrote, and tells it once", async () => {
    const creds = reader();
    let told = 0;
    const stop = creds.watch(() => told++);
    await creds.read();
    await new Promise((r) => setTimeout(r, 20));
    expect(told).toBe(0);
    await writeFile(file, "token-two-0123456789");
    await vi.waitFor(() => expect(told).toBeGreaterThan(0));
    await new Promise((r) => setTimeout(r, 30));
    expect(told).toBe(1);
    expect((await creds.read()).accessKeyId).toBe("AKID2");
    expect(exchanged.at(-1)).toBe("token-two-0123456789");
    stop();
  });

  it("tells a token written where none could be read", async () => {
    await rm(file);
    const creds = reader();
    let told = 0;
    const stop = creds.watch(() => told++);
    await expect(creds.read()).rejects.toThrow(ObjectStorageCredentialsError);
    await writeFile(file, "token-late-0123456789");
    await vi.waitFor(() => expect(told).toBeGreaterThan(0));
    await new Promise((r) => setTimeout(r, 30));
    expect(told).toBe(1);
    expect((await creds.read()).accessKeyId).toBe("AKID1");
    stop();
  });

  it("refuses a missing or empty token file as S3CredentialsRefused naming the file", async () => {
    await writeFile(file, "\n");
    const empty = await reader()
      .read()
      .catch((e: unknown) => e);
    expect(empty).toBeInstanceOf(ObjectStorageCredentialsError);
    expect((empty as Error).message).toBe(`the web identity token file ${file} is empty`);
    await rm(file);
    const missing = await reader()
      .read()
      .catch((e: unknown) => e);
    expect((missing as ObjectStorageCredentialsError).reason).toBe("S3CredentialsRefused");
    expect((missing as Error).message).toBe(
      `the web identity token file ${file} cannot be read: ENOENT`,
    );
    expect(exchanged).toEqual([]);
  });
});

describe("webIdentityOf", () => {
  it("takes the AWS SDKs' variables, and needs both the role and the token file", () => {
    expect(
      webIdentityOf({
        AWS_ROLE_ARN: "arn:aws:iam::1:role/r",
        AWS_WEB_IDENTITY_TOKEN_FILE: "/var/run/token",
        AWS_ROLE_SESSION_NAME: "aidc",
        AWS_ENDPOINT_URL_STS: "https://sts.example",
      }),
    ).toEqual({
      roleArn: "arn:aws:iam::1:role/r",
      tokenFile: "/var/run/token",
      sessionName: "aidc",
      stsEndpoint: "https://sts.example",
    });
    expect(webIdentityOf({ AWS_WEB_IDENTITY_TOKEN_FILE: "/var/run/token" })).toBeUndefined();
    expect(webIdentityOf({ AWS_ROLE_ARN: "arn:aws:iam::1:role/r" })).toBeUndefined();
  });
});
