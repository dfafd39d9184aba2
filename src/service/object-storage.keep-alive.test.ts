/**
 * The S3 client's idle keep-alive connections are closed before the server closes them,
 * as the service client's are (transport.keep-alive.test.ts): a request is never written
 * on a connection the server is closing. The server here is a minimal S3 endpoint
 * (ListBuckets) that closes idle connections after 300 ms and announces no hint.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { ListBucketsCommand, type S3Client } from "@aws-sdk/client-s3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ObjectStorageClient } from "./object-storage.js";

const SERVER_KEEP_ALIVE_MS = 300;
const LIST =
  '<?xml version="1.0" encoding="UTF-8"?><ListAllMyBucketsResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Owner><ID>o</ID></Owner><Buckets></Buckets></ListAllMyBucketsResult>';
let server: Server;
let endpoint = "";

beforeAll(async () => {
  server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      // Set by hand, the Connection header keeps Node from announcing its timeout.
      res.writeHead(200, { "Content-Type": "application/xml", Connection: "keep-alive" });
      res.end(LIST);
    });
  });
  server.keepAliveTimeout = SERVER_KEEP_ALIVE_MS;
  server.keepAliveTimeoutBuffer = 0;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

/** Holds the event loop, as a busy or paused process does: no timer runs meanwhile. */
function blockEventLoop(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/**
 * How many attempts a ListBuckets took, after a first one and an idle pause past the
 * server's keep-alive timeout. Read from the SDK's `$metadata` (the client's own
 * methods answer only the buckets): a first attempt written on the closed socket fails
 * with ECONNRESET and the SDK sends it again.
 */
async function attemptsAfterIdlePause(idleSocketTimeoutMs: number): Promise<number | undefined> {
  const client = new ObjectStorageClient({
    endpoint,
    region: "us-east-1",
    credentials: async () => ({ accessKeyId: "AKIDTEST", secretAccessKey: "secret-test-key" }),
    idleSocketTimeoutMs,
  });
  try {
    await client.listBuckets();
    blockEventLoop(SERVER_KEEP_ALIVE_MS + 200);
    const s3 = (client as unknown as { s3: S3Client }).s3;
    return (await s3.send(new ListBucketsCommand({}))).$metadata.attempts;
  } finally {
    client.close();
  }
}

describe("the S3 client's keep-alive sockets", () => {
  it("without an idle bound below the server's, a request is written on a socket the server closed", async () => {
    expect(await attemptsAfterIdlePause(60_000)).toBe(2);
  });

  it("a socket idle past idleSocketTimeoutMs is not reused, even when its timer is late", async () => {
    expect(await attemptsAfterIdlePause(200)).toBe(1);
  });

  it("lists buckets on connections spaced below and past the server's keep-alive timeout", async () => {
    const client = new ObjectStorageClient({
      endpoint,
      region: "us-east-1",
      credentials: async () => ({ accessKeyId: "AKIDTEST", secretAccessKey: "secret-test-key" }),
      idleSocketTimeoutMs: 200,
    });
    try {
      for (let gap = 100; gap <= 2 * SERVER_KEEP_ALIVE_MS; gap += 100) {
        await expect(client.listBuckets()).resolves.toEqual([]);
        await new Promise((r) => setTimeout(r, gap));
      }
    } finally {
      client.close();
    }
  });
});
