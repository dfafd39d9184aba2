/**
 * The account's bucket list is read page by page: S3 refuses an unpaginated ListBuckets
 * from an account whose bucket quota is above 10,000, and the list decides whose a
 * bucket is (a bucket it lacks is never bound, emptied nor deleted).
 */
import { createServer, type Server } from "node:http";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { ObjectStorageClient } from "./object-storage.js";
import { BUCKETS_PER_PAGE } from "./object-storage-list.js";

let server: Server;
let endpoint = "";
const NAMES = ["a1", "a2", "a3", "b1", "b2", "b3", "c1"];
/** How the server pages: as S3 above the quota, ignoring the page size, or repeating its token. */
let mode: "s3" | "one-page" | "same-token" | "denied" = "s3";
/** The query of each ListBuckets. */
let asked: URLSearchParams[] = [];

const xml = (names: string[], token?: string) =>
  `<ListAllMyBucketsResult><Buckets>${names.map((n) => `<Bucket><Name>${n}</Name><CreationDate>2026-11-01T00:00:00.000Z</CreationDate></Bucket>`).join("")}</Buckets>${token ? `<ContinuationToken>${token}</ContinuationToken>` : ""}</ListAllMyBucketsResult>`;

beforeAll(async () => {
  server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      const query = new URL(req.url ?? "/", "http://s3").searchParams;
      asked.push(query);
      res.setHeader("content-type", "application/xml");
      if (mode === "denied") {
        res.writeHead(403).end("<Error><Code>AccessDenied</Code><Message>no</Message></Error>");
        return;
      }
      if (mode === "one-page") return void res.end(xml(NAMES));
      if (!query.has("max-buckets")) {
        res
          .writeHead(400)
          .end("<Error><Code>InvalidRequest</Code><Message>unpaginated</Message></Error>");
        return;
      }
      // Three a page (a stand-in for S3's max-buckets), continued after the token's index.
      const from = Number(query.get("continuation-token") ?? 0);
      const page = NAMES.slice(from, from + 3);
      const next = from + 3 < NAMES.length ? String(from + 3) : undefined;
      res.end(xml(page, mode === "same-token" ? "3" : next));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  endpoint = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});
beforeEach(() => {
  asked = [];
});

async function list() {
  const client = new ObjectStorageClient({
    endpoint,
    region: "us-east-1",
    credentials: async () => ({ accessKeyId: "AKID", secretAccessKey: "secret" }),
  });
  try {
    return (await client.accountBuckets())?.map((b) => b.name);
  } finally {
    client.close();
  }
}

describe("the account's bucket list", () => {
  it("asks for pages and follows the continuation token to the last page", async () => {
    mode = "s3";
    expect(await list()).toEqual(NAMES);
    expect(asked.map((q) => q.get("max-buckets"))).toEqual(Array(3).fill(String(BUCKETS_PER_PAGE)));
    expect(asked.map((q) => q.get("continuation-token"))).toEqual([null, "3", "6"]);
  });

  it("takes one page without a token from a server that ignores the page size", async () => {
    mode = "one-page";
    expect(await list()).toEqual(NAMES);
    expect(asked).toHaveLength(1);
  });

  it("ends the read when a server answers the same token again", async () => {
    mode = "same-token";
    expect(await list()).toEqual(["a1", "a2", "a3", "b1", "b2", "b3"]);
    expect(asked).toHaveLength(2);
  });

  it("is unknown when the credentials may not list the account's buckets", async () => {
    mode = "denied";
    expect(await list()).toBeUndefined();
  });
});
