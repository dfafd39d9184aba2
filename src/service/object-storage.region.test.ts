/**
 * A HEAD's 400 names the bucket's region in `x-amz-bucket-region` whatever its cause:
 * only a region other than the one the request was signed for is S3RegionMismatch.
 */
import { createServer, type Server } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ObjectStorageClient } from "./object-storage.js";
import { ObjectStorageRegionError } from "./object-storage-region.js";

let server: Server;
let endpoint = "";
/** The region the fake storage's answers name. */
let storageRegion = "us-east-1";

beforeAll(async () => {
  server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      // As MinIO answers a name S3 refuses: 400, the region header, the code in a GET's body.
      res.writeHead(400, {
        "content-type": "application/xml",
        "x-amz-bucket-region": storageRegion,
      });
      res.end(
        req.method === "HEAD"
          ? undefined
          : "<Error><Code>InvalidBucketName</Code><Message>The specified bucket is not valid.</Message></Error>",
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  endpoint = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

async function headError(region: string): Promise<unknown> {
  const client = new ObjectStorageClient({
    endpoint,
    region,
    credentials: async () => ({ accessKeyId: "AKIDTEST", secretAccessKey: "secret-test-key" }),
  });
  try {
    return await client.headBucket("data").catch((e: unknown) => e);
  } finally {
    client.close();
  }
}

describe("a HEAD answered 400 with the bucket's region", () => {
  it("is the answer's own refusal when the region is the one signed for", async () => {
    storageRegion = "us-east-1";
    const err = await headError("us-east-1");
    expect(err).not.toBeInstanceOf(ObjectStorageRegionError);
    expect(String(err)).toMatch(/S3 HeadBucket of bucket data: InvalidBucketName/);
  });

  it("is S3RegionMismatch, naming the storage's region, when it is another", async () => {
    storageRegion = "eu-west-1";
    const err = await headError("us-east-1");
    expect(err).toBeInstanceOf(ObjectStorageRegionError);
    expect(String(err)).toMatch(/answered for region eu-west-1/);
  });
});
