/**
 * An AccessDenied of the object storage names the IAM action to grant and is an
 * external hold (a policy changed on the server fixes it), as MinIO answers a user
 * whose policy lacks one action: a HEAD (no body) of a bucket the account lists is
 * the credentials' missing s3:ListBucket, not a bucket of another account.
 */
import { createServer, type Server } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isExternalHold } from "../runtime/errors.js";
import { ObjectStorageClient } from "./object-storage.js";
import { ObjectStorageAccessDeniedError } from "./object-storage-errors.js";

let server: Server;
let endpoint = "";
/** The buckets GET / lists; undefined: the list is refused too. */
let listed: string[] | undefined = [];

const DENIED = `<?xml version="1.0" encoding="UTF-8"?>
<Error><Code>AccessDenied</Code><Message>Access Denied.</Message></Error>`;

beforeAll(async () => {
  server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      if (req.method === "GET" && req.url?.startsWith("/?") && listed) {
        const names = listed.map((n) => `<Bucket><Name>${n}</Name></Bucket>`).join("");
        res.writeHead(200, { "content-type": "application/xml" });
        res.end(`<ListAllMyBucketsResult><Buckets>${names}</Buckets></ListAllMyBucketsResult>`);
        return;
      }
      if (req.method === "GET" && req.url?.includes("versions")) {
        res.writeHead(200, { "content-type": "application/xml" });
        res.end(
          "<ListVersionsResult><Version><Key>k</Key><VersionId>v1</VersionId></Version></ListVersionsResult>",
        );
        return;
      }
      if (req.method === "POST" && req.url?.includes("delete")) {
        // As MinIO answers a user without s3:DeleteObject: 200, each object refused.
        res.writeHead(200, { "content-type": "application/xml" });
        res.end(
          "<DeleteResult><Error><Key>k</Key><VersionId>v1</VersionId><Code>AccessDenied</Code><Message>Access Denied.</Message></Error></DeleteResult>",
        );
        return;
      }
      res.writeHead(403, { "content-type": "application/xml" });
      res.end(req.method === "HEAD" ? undefined : DENIED);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  endpoint = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

async function withClient<T>(run: (c: ObjectStorageClient) => Promise<T>): Promise<T> {
  const client = new ObjectStorageClient({
    endpoint,
    region: "us-east-1",
    credentials: async () => ({ accessKeyId: "AKIDTEST", secretAccessKey: "secret-test-key" }),
  });
  try {
    return await run(client);
  } finally {
    client.close();
  }
}

describe("an AccessDenied of the object storage", () => {
  it("names the action of the operation to grant, held externally", async () => {
    const err = await withClient((c) => c.getLifecycle("data")).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ObjectStorageAccessDeniedError);
    expect(isExternalHold(err)).toBe(true);
    expect((err as Error).message).toBe(
      "S3 GetBucketLifecycleConfiguration of bucket data: AccessDenied: Access Denied. (the S3 credentials need s3:GetLifecycleConfiguration on bucket data: grant it in their policy, and check that no bucket policy denies it)",
    );
    const policy = await withClient((c) => c.getPolicy("data")).catch((e: unknown) => e);
    expect((policy as Error).message).toContain("need s3:GetBucketPolicy on bucket data");
  });

  it("of the objects a forceDestroy deletes is held naming the actions, not retried as unavailable", async () => {
    const err = await withClient((c) => c.deleteAllVersions("data")).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ObjectStorageAccessDeniedError);
    expect(isExternalHold(err)).toBe(true);
    expect((err as Error).message).toContain(
      "need s3:DeleteObject and s3:DeleteObjectVersion on bucket data",
    );
  });

  it("of a HEAD of a bucket the account lists is the missing s3:ListBucket, not another account's bucket", async () => {
    listed = ["data"];
    const err = await withClient((c) => c.headBucket("data")).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ObjectStorageAccessDeniedError);
    expect((err as Error).message).toContain("need s3:ListBucket on bucket data");
    listed = ["other"];
    expect(await withClient((c) => c.headBucket("data"))).toBe("Forbidden");
  });

  it("of a HEAD and of the bucket list (credentials scoped to other buckets) is Forbidden, not the missing s3:ListAllMyBuckets", async () => {
    listed = undefined;
    expect(await withClient((c) => c.headBucket("data"))).toBe("Forbidden");
    listed = [];
  });

  it("of the bucket list alone (s3:ListAllMyBuckets not granted) lists none: the credentials still reach their buckets", async () => {
    listed = undefined;
    expect(await withClient((c) => c.listBuckets())).toEqual([]);
    listed = [];
  });
});
