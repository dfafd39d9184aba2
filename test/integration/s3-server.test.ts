import { PutObjectCommand, S3Client } from "@aws-sdk/client-s3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LocalS3Server } from "../../src/controlplane/s3-server.js";
import { ServiceUnavailableError } from "../../src/service/errors.js";
import { ObjectStorageClient } from "../../src/service/object-storage.js";
import {
  ObjectStorageCredentialsError,
  ObjectStorageNotImplementedError,
} from "../../src/service/object-storage-errors.js";
import { ObjectsLockedError } from "../../src/service/object-storage-lock.js";
import { S3Front, s3Fixture } from "../support/s3-front.js";

/**
 * The local S3 server (MinIO built by tools/minio/build.sh) and the object storage
 * client against it: what the Bucket kind rests on.
 */
describe("the local S3 server and the object storage client", () => {
  let server: LocalS3Server;
  let s3: ObjectStorageClient;
  /** A client with the server's keys, of `endpoint` (the server's, or a front's). */
  const clientOf = (endpoint: string) =>
    new ObjectStorageClient({
      endpoint,
      region: server.region,
      credentials: async () => ({
        accessKeyId: server.accessKeyId,
        secretAccessKey: server.secretAccessKey,
      }),
    });

  beforeAll(async () => {
    server = await new LocalS3Server().start();
    s3 = clientOf(server.url);
  }, 120_000);

  afterAll(async () => {
    s3?.close();
    await server?.stop();
  });

  it("creates a bucket once: a second create answers AlreadyOwnedByYou", async () => {
    expect(await s3.headBucket("harness")).toBe("Absent");
    expect(await s3.createBucket("harness")).toBe("Created");
    expect(await s3.createBucket("harness")).toBe("AlreadyOwnedByYou");
    expect(await s3.headBucket("harness")).toBe("Present");
    const listed = (await s3.listBuckets()).find((b) => b.name === "harness");
    expect(listed?.creationDate).toBeInstanceOf(Date);
  });

  it("writes and reads back versioning, lifecycle rules, a policy and tags", async () => {
    await s3.putVersioning("harness", "Enabled");
    expect(await s3.getVersioning("harness")).toBe("Enabled");
    const rules = [
      { id: "tmp", prefix: "tmp/", enabled: true, expirationDays: 7 },
      { id: "nc", prefix: "", enabled: true, noncurrentVersionExpirationDays: 30 },
    ];
    expect(await s3.getLifecycle("harness")).toEqual([]);
    await s3.putLifecycle("harness", rules);
    expect(await s3.getLifecycle("harness")).toEqual(rules);
    expect(await s3.getPolicy("harness")).toBeUndefined();
    await s3.putPolicy(
      "harness",
      JSON.stringify({
        Version: "2012-10-17",
        Statement: [
          {
            Effect: "Allow",
            Principal: "*",
            Action: "s3:GetObject",
            Resource: "arn:aws:s3:::harness/*",
          },
        ],
      }),
    );
    // The server stores the policy in its own spelling (lists, {"AWS": ["*"]}).
    expect(JSON.parse((await s3.getPolicy("harness")) ?? "{}").Statement[0]).toMatchObject({
      Principal: { AWS: ["*"] },
      Action: ["s3:GetObject"],
    });
    await s3.putTags("harness", { team: "vision" });
    expect(await s3.getTags("harness")).toEqual({ team: "vision" });
    await s3.putLifecycle("harness", []);
    expect(await s3.getLifecycle("harness")).toEqual([]);
  });

  it("reports CORS as not implemented by this server", async () => {
    expect(await s3.getCors("harness")).toEqual([]);
    await expect(
      s3.putCors("harness", [
        { allowedOrigins: ["*"], allowedMethods: ["GET"], allowedHeaders: [], exposeHeaders: [] },
      ]),
    ).rejects.toBeInstanceOf(ObjectStorageNotImplementedError);
  });

  it("classifies refused credentials, also behind a HEAD answer without a body", async () => {
    const wrong = new ObjectStorageClient({
      endpoint: server.url,
      region: server.region,
      credentials: async () => ({
        accessKeyId: "nobody-here",
        secretAccessKey: "wrong-secret-key",
      }),
    });
    try {
      await expect(wrong.headBucket("harness")).rejects.toBeInstanceOf(
        ObjectStorageCredentialsError,
      );
      await expect(wrong.getTags("harness")).rejects.toBeInstanceOf(ObjectStorageCredentialsError);
    } finally {
      wrong.close();
    }
  });

  it("takes a BucketAlreadyExists for a bucket the account has as its own (SeaweedFS's answer for one with object lock)", async () => {
    expect(await s3.createBucket("locked-own")).toBe("Created");
    const fixture = await s3Fixture("seaweedfs-4.53-create-own-locked-bucket");
    const front = await new S3Front(server.url, fixture).start();
    const via = clientOf(front.url);
    try {
      expect(await via.createBucket("locked-own")).toBe("AlreadyOwnedByYou");
      // A name the account does not have (its HEAD: 404) is another's.
      expect(await via.createBucket("someone-elses")).toBe("TakenElsewhere");
      expect(front.answered).toEqual(["PUT /locked-own/", "PUT /someone-elses/"]);
    } finally {
      via.close();
      await front.stop();
    }
  });

  it("tells a version SeaweedFS refuses to delete with a bare AccessDenied under a legal hold as locked, not as a missing permission", async () => {
    const fixture = await s3Fixture("seaweedfs-4.53-delete-legal-hold");
    const front = await new S3Front(server.url, fixture).start();
    const via = clientOf(front.url);
    try {
      const err = await via.deleteAllVersions("swlock-cap").catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ObjectsLockedError);
      const locked = err as ObjectsLockedError;
      expect(locked).toMatchObject({ deleted: 1, more: false });
      expect(await via.versionLocks("swlock-cap", locked.locked)).toEqual([
        { key: "held.bin", versionId: "6713d435882b9d73b576a5b53612e3dd", legalHold: true },
      ]);
    } finally {
      via.close();
      await front.stop();
    }
  });

  it("stops emptying a bucket whose listing shows again what DeleteObjects answered as deleted (gofakes3's version null), not looping", async () => {
    const fixture = await s3Fixture("gofakes3-1.2.0-delete-null-version");
    const front = await new S3Front(server.url, fixture).start();
    const via = clientOf(front.url);
    try {
      const err = await via.deleteAllVersions("gfdel1").catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ServiceUnavailableError);
      expect((err as Error).message).toBe(
        "S3 DeleteObjects of bucket gfdel1: the object storage answered 1 version as deleted, yet lists it still (a.bin version null): it does not delete it; empty the bucket with its own tools, or set deletionPolicy: Orphan",
      );
      expect(front.answered.map((r) => r.split(" ")[0])).toEqual(["GET", "POST", "GET"]);
    } finally {
      via.close();
      await front.stop();
    }
  });

  it("counts and empties a bucket by its objects on a server without ListObjectVersions (Garage)", async () => {
    expect(await s3.createBucket("no-versions")).toBe("Created");
    const sdk = new S3Client({
      endpoint: server.url,
      region: server.region,
      forcePathStyle: true,
      credentials: { accessKeyId: server.accessKeyId, secretAccessKey: server.secretAccessKey },
    });
    for (const key of ["a", "b/c"]) {
      await sdk.send(new PutObjectCommand({ Bucket: "no-versions", Key: key, Body: "x" }));
    }
    sdk.destroy();
    const fixture = await s3Fixture("garage-2.5.0-no-object-versions");
    const front = await new S3Front(server.url, fixture).start();
    const via = clientOf(front.url);
    try {
      expect(await via.countObjectVersions("no-versions")).toEqual({ count: 2, more: false });
      expect(await via.deleteAllVersions("no-versions")).toBe(2);
      expect(await s3.countObjectVersions("no-versions")).toEqual({ count: 0, more: false });
      // The ListObjectVersions of the count and of the two pages of the emptying.
      expect(front.answered).toHaveLength(3);
    } finally {
      via.close();
      await front.stop();
    }
  });

  it("restarts with a new key pair on the same data: the old pair is refused", async () => {
    const old = { accessKeyId: server.accessKeyId, secretAccessKey: server.secretAccessKey };
    await server.restartWithKeys("rotated-key-id", "rotated-secret-key-0123");
    const before = new ObjectStorageClient({
      endpoint: server.url,
      region: server.region,
      credentials: async () => old,
    });
    try {
      await expect(before.listBuckets()).rejects.toBeInstanceOf(ObjectStorageCredentialsError);
      expect(await s3.headBucket("harness")).toBe("Present");
    } finally {
      before.close();
    }
  });
});
