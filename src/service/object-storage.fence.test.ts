/**
 * The S3 client asks `mayCall` (ObjectStorageOptions) right before each attempt, the
 * SDK's retry included, as the service client does: a process whose Lease may have
 * passed to another replica sends the object storage nothing.
 */
import { createServer, type Server } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ServiceUnavailableError } from "./errors.js";
import { ObjectStorageClient } from "./object-storage.js";

let server: Server;
let endpoint = "";
/** The requests the endpoint took, and the status it answers each with (200 once past the list). */
const received: string[] = [];
let statuses: number[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    received.push(`${req.method} ${req.url}`);
    req.resume();
    req.on("end", () => res.writeHead(statuses.shift() ?? 200).end());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  endpoint = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const clientAsking = (mayCall: () => boolean) =>
  new ObjectStorageClient({
    endpoint,
    region: "us-east-1",
    credentials: async () => ({ accessKeyId: "AKIDTEST", secretAccessKey: "secret-test-key" }),
    mayCall,
  });

describe("the S3 client of a process that may no longer act", () => {
  it("sends nothing, the call failed as stopped", async () => {
    received.length = 0;
    const client = clientAsking(() => false);
    try {
      const err = await client.createBucket("fenced").catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ServiceUnavailableError);
      expect((err as Error).message).toBe(
        "S3 CreateBucket of bucket fenced was stopped: its reconcile was abandoned",
      );
      expect(received).toEqual([]);
    } finally {
      client.close();
    }
  });

  it("sends no retry once it may no longer act, and sends while it may: a create whose first attempt may have acted is of unknown outcome", async () => {
    received.length = 0;
    statuses = [500];
    let may = true;
    const client = clientAsking(() => {
      const now = may;
      // The first attempt goes out; by the retry the Lease has passed on.
      may = false;
      return now;
    });
    try {
      const err = await client.createBucket("lapsed").catch((e: unknown) => e);
      // The 500 came after the storage may have made the bucket.
      expect(err).toMatchObject({ outcomeUnknown: true });
      expect((err as Error).message).toBe(
        "S3 CreateBucket of bucket lapsed was stopped: its reconcile was abandoned, after an earlier attempt that may have reached the object storage",
      );
      expect(received).toEqual(["PUT /lapsed/"]);
    } finally {
      client.close();
    }
  });
});
