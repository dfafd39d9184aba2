/**
 * A create answered BucketAlreadyExists is the account's own bucket only when the
 * account's bucket list has it (SeaweedFS answers so for its own bucket with object
 * lock), never because a HEAD answers 200: S3 answers 200 for another account's bucket
 * that grants this one s3:ListBucket.
 */
import { createServer, type Server } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ObjectStorageClient } from "./object-storage.js";

let server: Server;
let endpoint = "";
/** The buckets GET / lists; undefined: the list is refused. */
let listed: string[] | undefined = [];

const error = (code: string) =>
  `<?xml version="1.0" encoding="UTF-8"?><Error><Code>${code}</Code><Message>${code}</Message></Error>`;

beforeAll(async () => {
  server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      res.setHeader("content-type", "application/xml");
      if (req.method === "GET" && req.url?.startsWith("/?")) {
        if (!listed) {
          res.writeHead(403).end(error("AccessDenied"));
          return;
        }
        const names = listed.map((n) => `<Bucket><Name>${n}</Name></Bucket>`).join("");
        res.end(`<ListAllMyBucketsResult><Buckets>${names}</Buckets></ListAllMyBucketsResult>`);
        return;
      }
      // Every bucket exists and grants a read: HEAD 200, CreateBucket 409.
      if (req.method === "HEAD") res.writeHead(200).end();
      else res.writeHead(409).end(error("BucketAlreadyExists"));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  endpoint = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

describe("createBucket answered BucketAlreadyExists", () => {
  const create = async (name: string) => {
    const client = new ObjectStorageClient({
      endpoint,
      region: "us-east-1",
      credentials: async () => ({ accessKeyId: "AKID", secretAccessKey: "secret" }),
    });
    try {
      return await client.createBucket(name);
    } finally {
      client.close();
    }
  };

  it("is the account's own when its bucket list has the name", async () => {
    listed = ["mine"];
    expect(await create("mine")).toBe("AlreadyOwnedByYou");
  });

  it("is another account's when the list lacks it, though the HEAD answers 200", async () => {
    listed = ["mine"];
    expect(await create("shared-by-another")).toBe("TakenElsewhere");
  });

  it("is another account's when the list is refused", async () => {
    listed = undefined;
    expect(await create("mine")).toBe("TakenElsewhere");
  });
});
