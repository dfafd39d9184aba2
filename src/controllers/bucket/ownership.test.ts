/**
 * A HEAD's 200 is not the account's bucket: S3 answers it for another account's bucket
 * that grants this one s3:ListBucket. Against a server where every HEAD answers 200,
 * the account's bucket list decides the preflight, the observe, the lookup of a lost
 * create and the delete, and a bucket it lacks is never changed, emptied nor deleted.
 */
import { createServer, type Server } from "node:http";
import pino from "pino";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { ObjectStorageClient } from "../../service/object-storage.js";
import type { ManagedCall } from "../managed/call.js";
import { BucketExternalClient, type BucketObject } from "./external.js";
import { markOf, OWNER_TAG } from "./features.js";

let server: Server;
let storage: ObjectStorageClient;
/** The buckets GET / lists; undefined: the list is refused. */
let listed: string[] | undefined;
/** The tags every bucket answers. */
let tags: Record<string, string> = {};
/** The reads of the bucket list. */
let lists = 0;
/** The Warnings of the calls. */
let warned: string[] = [];
/** Whether the bucket still holds its one object version. */
let holds = true;
/** Every request but the reads of the bucket list, as `METHOD /path?query`. */
let sent: string[] = [];

const xml = (body: string) => `<?xml version="1.0" encoding="UTF-8"?>${body}`;
const error = (code: string) =>
  xml(`<Error><Code>${code}</Code><Message>${code}</Message></Error>`);

/** The answer of a bucket's read: every bucket is there, unversioned, with one object. */
function bucketRead(url: string): [number, string] {
  const q = new URL(url, "http://s3").searchParams;
  if (q.has("tagging")) {
    const set = Object.entries(tags).map(
      ([k, v]) => `<Tag><Key>${k}</Key><Value>${v}</Value></Tag>`,
    );
    return [200, xml(`<Tagging><TagSet>${set.join("")}</TagSet></Tagging>`)];
  }
  if (q.has("versioning")) return [200, xml("<VersioningConfiguration/>")];
  if (q.has("versions")) {
    const version = holds ? "<Version><Key>a</Key><VersionId>v1</VersionId></Version>" : "";
    return [
      200,
      xml(`<ListVersionsResult><IsTruncated>false</IsTruncated>${version}</ListVersionsResult>`),
    ];
  }
  if (q.has("lifecycle")) return [404, error("NoSuchLifecycleConfiguration")];
  if (q.has("policy")) return [404, error("NoSuchBucketPolicy")];
  return [404, error("NoSuchCORSConfiguration")];
}

beforeAll(async () => {
  server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      res.setHeader("content-type", "application/xml");
      const [path = "/"] = (req.url ?? "/").split("?");
      if (req.method === "GET" && path === "/") {
        lists++;
        if (!listed) return res.writeHead(403).end(error("AccessDenied"));
        const names = listed.map((n) => `<Bucket><Name>${n}</Name></Bucket>`).join("");
        return res.end(
          xml(`<ListAllMyBucketsResult><Buckets>${names}</Buckets></ListAllMyBucketsResult>`),
        );
      }
      sent.push(`${req.method} ${req.url}`);
      // Every bucket exists and grants a read (HEAD 200); a write answers done.
      if (req.method === "HEAD") return res.writeHead(200).end();
      if (req.method === "GET") {
        const [status, body] = bucketRead(req.url ?? "/");
        return res.writeHead(status).end(body);
      }
      holds &&= req.method !== "POST";
      if (req.method === "POST") return res.end(xml("<DeleteResult/>"));
      return res.writeHead(req.method === "DELETE" ? 204 : 200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  storage = new ObjectStorageClient({
    endpoint: `http://127.0.0.1:${port}`,
    region: "us-east-1",
    credentials: async () => ({ accessKeyId: "AKID", secretAccessKey: "secret" }),
  });
});
afterAll(async () => {
  storage.close();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});
beforeEach(() => {
  sent = [];
  warned = [];
  tags = {};
  holds = true;
});

function call(spec: Partial<BucketObject["spec"]>, status?: BucketObject["status"]) {
  const obj: BucketObject = {
    apiVersion: "aidc.io/v1alpha1",
    kind: "Bucket",
    metadata: { name: "data", namespace: "ns", uid: "u1", generation: 1 },
    spec: { adopt: false, forceDestroy: false, deletionPolicy: "Delete", ...spec },
    ...(status ? { status } : {}),
  };
  const c: ManagedCall<BucketObject> = {
    obj,
    refs: undefined,
    now: () => new Date("2026-01-01T00:00:00Z"),
    log: pino({ level: "silent" }),
    normal: () => undefined,
    warning: (reason, note) => warned.push(`${reason}: ${note}`),
    annotate: async () => obj,
  };
  return c;
}

const external = () => new BucketExternalClient(async () => storage, new Map(), 1_000);
/** The requests that change a bucket or its objects. */
const writes = () => sent.filter((r) => !r.startsWith("GET ") && !r.startsWith("HEAD "));

describe("a bucket whose HEAD answers 200", () => {
  it("is refused by the preflight as another account's when the account's list lacks it", async () => {
    listed = ["other"];
    const refusal = await external().preflight(call({}));
    expect(refusal).toMatchObject({ reason: "BucketNameTaken" });
    expect(refusal?.message).toContain("the account's bucket list does not have it");
  });

  it("is refused by the preflight as the account's, not adopted, when the list has it", async () => {
    listed = ["data"];
    expect(await external().preflight(call({}))).toMatchObject({
      reason: "BucketExistsNotAdopted",
    });
  });

  it("is refused by the preflight saying it cannot tell whose it is when the list is refused", async () => {
    listed = undefined;
    const refusal = await external().preflight(call({}));
    expect(refusal).toMatchObject({ reason: "BucketExistsNotAdopted" });
    expect(refusal?.message).toContain("cannot be told");
  });

  it("is not observed nor changed when bound and the account's list lacks it", async () => {
    listed = ["other"];
    const read = external().observe(call({ versioning: "Enabled", tags: { a: "b" } }), "data");
    await expect(read).rejects.toMatchObject({ reason: "ReconcileTerminal" });
    await expect(read).rejects.toThrow(/the account's bucket list does not have it/);
    expect(writes()).toEqual([]);
  });

  it("is observed when bound and listed, and when the list is refused", async () => {
    for (const list of [["data"], undefined]) {
      listed = list;
      const o = await external().observe(call({}), "data");
      expect(o.exists).toBe(true);
    }
  });

  it("is not found by the lookup of a lost create though it carries the object's mark, when not listed", async () => {
    const c = call({});
    tags = { [OWNER_TAG]: markOf(c.obj) };
    const sentCreate = { token: "t", at: "2025-12-31T23:59:00Z" };
    listed = ["other"];
    expect(await external().lookupByToken(c, sentCreate)).toEqual([]);
    listed = ["data"];
    expect(await external().lookupByToken(c, sentCreate)).toEqual(["data"]);
  });

  it("is neither emptied nor deleted under forceDestroy when the account's list lacks it", async () => {
    listed = ["other"];
    const c = call({ forceDestroy: true }, { creationTime: "2025-01-01T00:00:00Z" });
    const client = external();
    expect(await client.beforeDelete(c, "data")).toBe("Done");
    expect(await client.delete(c, "data")).toBe("Deleted");
    expect(writes()).toEqual([]);
    expect(warned).toEqual([
      "DeletePolicyNotHonoured: bucket data is left as it is, neither emptied nor deleted: it is not the one this object recorded (the account's bucket list does not have it, or it was made outside since under its name)",
    ]);
    // Listed, it is emptied and deleted.
    listed = ["data"];
    expect(await client.beforeDelete(c, "data")).toBe("Done");
    expect(await client.delete(c, "data")).toBe("Deleted");
    expect(writes()).toEqual(["POST /data/?delete=", "DELETE /data/"]);
  });

  it("waits, before leaving it, while the list may not show the bucket of an object just made", async () => {
    listed = ["other"];
    const c = call({ forceDestroy: true });
    c.obj.metadata.creationTimestamp = "2025-12-31T23:59:30Z";
    const client = external();
    // 30 s after the object was made, never listed: the list may lag behind the create.
    expect(await client.beforeDelete(c, "data")).toMatchObject({
      waiting: expect.stringMatching(/does not show bucket data yet, 30 s after/),
      requeueAfterMs: 5_000,
    });
    expect(warned).toEqual([]);
    // Listed then: emptied and deleted as its own.
    listed = ["data"];
    expect(await client.beforeDelete(c, "data")).toBe("Done");
    expect(writes()).toEqual(["POST /data/?delete="]);
    // Past the lag and still not listed: left alone, said so.
    listed = ["other"];
    c.obj.metadata.creationTimestamp = "2025-12-31T23:58:00Z";
    expect(await client.beforeDelete(c, "data")).toBe("Done");
    expect(warned).toHaveLength(1);
  });

  it("is read from one list shared by the routine polls, read again when it lacks the bucket or a change is to be made", async () => {
    listed = ["data", "logs"];
    tags = { [OWNER_TAG]: markOf(call({}).obj) };
    const client = external();
    const from = lists;
    for (const name of ["data", "logs", "data"]) {
      expect((await client.observe(call({}), name)).exists).toBe(true);
    }
    expect(lists - from).toBe(1);
    // A bucket made since the list was read.
    listed = ["data", "logs", "new"];
    expect((await client.observe(call({}), "new")).exists).toBe(true);
    expect(lists - from).toBe(2);
    // Another account's since: the read for a change finds it gone from the list.
    listed = ["logs", "new"];
    const read = client.observe(call({ versioning: "Enabled" }), "data");
    await expect(read).rejects.toMatchObject({ reason: "ReconcileTerminal" });
    expect(lists - from).toBe(3);
    expect(writes()).toEqual([]);
  });
});
