/**
 * An S3 call whose http(s) proxy (HTTPS_PROXY, HTTP_PROXY) cannot be reached says that
 * the proxy is the problem, and which one, without its user and password.
 */
import { describe, expect, it } from "vitest";
import { freePort } from "../controlplane/controlplane.js";
import { ServiceUnavailableError } from "./errors.js";
import { ObjectStorageClient } from "./object-storage.js";

describe("the S3 client through a proxy that cannot be reached", () => {
  it.each([
    ["https://s3.example.test", "HTTPS_PROXY"],
    ["http://s3.example.test:9000", "HTTP_PROXY"],
  ])("fails a call to %s naming the proxy of %s, retryable", async (endpoint, where) => {
    const port = await freePort();
    const client = new ObjectStorageClient({
      endpoint,
      region: "us-east-1",
      credentials: async () => ({ accessKeyId: "AKIDTEST", secretAccessKey: "secret-test-key" }),
      proxyFor: () => `http://aidc:pr0xy-pa55@127.0.0.1:${port}`,
    });
    try {
      const failed = await client.headBucket("logs").catch((err: unknown) => err);
      expect(failed).toBeInstanceOf(ServiceUnavailableError);
      expect((failed as Error).message).toBe(
        `S3 HeadBucket of bucket logs: no answer (the proxy http://127.0.0.1:${port} of ${where} cannot be reached: connect ECONNREFUSED 127.0.0.1:${port})`,
      );
      const listed = await client.listBuckets().catch((err: unknown) => err);
      expect((listed as Error).message).toContain(`the proxy http://127.0.0.1:${port} of ${where}`);
      expect(JSON.stringify([failed, listed, String(failed)])).not.toContain("pr0xy-pa55");
    } finally {
      client.close();
    }
  });
});
