/**
 * An object storage in another region than the connection's objectStorage.region
 * (MinIO with MINIO_REGION): its refusal names the region to set and is an external
 * hold, for the HEAD before a create (a 400 without a body) as for the calls with one;
 * so is versitygw's (answers in test/fixtures/s3), whose HEAD's 400 has no region header.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LocalS3Server } from "../../src/controlplane/s3-server.js";
import { isExternalHold } from "../../src/runtime/errors.js";
import { ObjectStorageClient } from "../../src/service/object-storage.js";
import { ObjectStorageRegionError } from "../../src/service/object-storage-region.js";
import { S3Front, s3Fixture } from "../support/s3-front.js";

describe("an object storage in another region than the one requests are signed for", () => {
  let server: LocalS3Server;
  const clients: ObjectStorageClient[] = [];
  const signedFor = (region: string, endpoint = server.url) => {
    const c = new ObjectStorageClient({
      endpoint,
      region,
      credentials: async () => ({
        accessKeyId: server.accessKeyId,
        secretAccessKey: server.secretAccessKey,
      }),
    });
    clients.push(c);
    return c;
  };

  beforeAll(async () => {
    server = await new LocalS3Server({ region: "eu-west-1" }).start();
  }, 120_000);
  afterAll(async () => {
    for (const c of clients) c.close();
    await server?.stop();
  });

  it("says which region to set, held externally, and creates nothing", async () => {
    const wrong = signedFor("us-east-1");
    const expected = `the object storage answered for region eu-west-1, not the one the requests are signed for: set the connection's object storage region to eu-west-1`;
    for (const call of [() => wrong.headBucket("models"), () => wrong.createBucket("models")]) {
      const err = await call().catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ObjectStorageRegionError);
      expect(isExternalHold(err)).toBe(true);
      expect((err as Error).message).toContain(expected);
    }
    const right = signedFor("eu-west-1");
    expect(await right.headBucket("models")).toBe("Absent");
    expect(await right.createBucket("models")).toBe("Created");
    const err = await wrong.getVersioning("models").catch((e: unknown) => e);
    expect((err as Error).message).toBe(
      `S3 GetBucketVersioning of bucket models: ${expected} (operator config objectStorage.region, or the ServiceConnection's spec.objectStorage.region)`,
    );
  });

  it.each([
    ["versitygw-1.8.0-wrong-region", "eu-central-1"],
    ["garage-2.5.0-wrong-region", "garage"],
  ])(
    "says which region to set when a HEAD's 400 has no region header and the GET's message does not quote it as S3 does (%s)",
    async (fixture, region) => {
      const front = await new S3Front(server.url, await s3Fixture(fixture)).start();
      try {
        const wrong = signedFor("us-east-1", front.url);
        for (const call of [() => wrong.headBucket("models"), () => wrong.getTags("models")]) {
          const err = await call().catch((e: unknown) => e);
          expect(err).toBeInstanceOf(ObjectStorageRegionError);
          expect(isExternalHold(err)).toBe(true);
          expect((err as Error).message).toContain(
            `set the connection's object storage region to ${region}`,
          );
        }
        // The HEAD, the GET of the bucket that tells its 400, the GET of the tags.
        expect(front.answered.map((r) => r.split("?")[0])).toEqual([
          "HEAD /models/",
          "GET /models/",
          "GET /models/",
        ]);
      } finally {
        await front.stop();
      }
    },
  );
});
