/**
 * An S3 call whose proxy (HTTPS_PROXY, HTTP_PROXY) cannot be reached or refuses the
 * tunnel says that the proxy is the problem, which one and whose setting, without its
 * user and password; a create it failed is known not to have been sent (a plain retry,
 * not an unknown outcome), unless an earlier attempt of the call may have reached the
 * storage.
 */
import { createServer } from "node:http";
import { type AddressInfo, createServer as createTcpServer } from "node:net";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConnectProxy } from "../../test/support/connect-proxy.js";
import { freePort } from "../controlplane/controlplane.js";
import { ServiceUnavailableError } from "./errors.js";
import { ObjectStorageClient } from "./object-storage.js";

const PASSWORD = "pr0xy-pa55";

function s3Client(endpoint: string, proxy?: string): ObjectStorageClient {
  return new ObjectStorageClient({
    endpoint,
    region: "us-east-1",
    credentials: async () => ({ accessKeyId: "AKIDTEST", secretAccessKey: "secret-test-key" }),
    ...(proxy ? { proxyFor: () => proxy } : {}),
  });
}

/** The error as the log writes it, its causes included. */
const logged = (err: unknown) => JSON.stringify(pino.stdSerializers.err(err as Error));

describe("the S3 client through a proxy that cannot be reached", () => {
  it.each([
    ["https://s3.example.test", "HTTPS_PROXY"],
    ["http://s3.example.test:9000", "HTTP_PROXY"],
  ])("fails a call to %s naming the proxy of %s, retryable", async (endpoint, where) => {
    const port = await freePort();
    const client = s3Client(endpoint, `http://aidc:${PASSWORD}@127.0.0.1:${port}`);
    try {
      const failed = await client.headBucket("logs").catch((err: unknown) => err);
      expect(failed).toBeInstanceOf(ServiceUnavailableError);
      expect((failed as Error).message).toBe(
        `S3 HeadBucket of bucket logs: no answer (the proxy http://127.0.0.1:${port} of ${where} cannot be reached: connect ECONNREFUSED 127.0.0.1:${port})`,
      );
      const listed = await client.listBuckets().catch((err: unknown) => err);
      expect((listed as Error).message).toContain(`the proxy http://127.0.0.1:${port} of ${where}`);
      expect(JSON.stringify([failed, listed, String(failed)])).not.toContain(PASSWORD);
    } finally {
      client.close();
    }
  });

  it("fails a create as not sent: nothing reached the object storage", async () => {
    const port = await freePort();
    const client = s3Client("https://s3.example.test", `http://aidc:${PASSWORD}@127.0.0.1:${port}`);
    const err = await client.createBucket("logs").catch((e: unknown) => e);
    client.close();
    expect(err).toMatchObject({ retryable: true, outcomeUnknown: false });
    expect((err as Error).message).toBe(
      `S3 CreateBucket of bucket logs: no answer (the proxy http://127.0.0.1:${port} of HTTPS_PROXY cannot be reached: connect ECONNREFUSED 127.0.0.1:${port})`,
    );
    expect(logged(err)).not.toContain(PASSWORD);
  });
});

describe("the S3 client through a proxy that refuses the tunnel", () => {
  let status = 503;
  const proxy = createServer((_req, res) => res.writeHead(405).end());
  proxy.on("connect", (_req, socket) => socket.end(`HTTP/1.1 ${status} No\r\n\r\n`));
  beforeAll(() => new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve)));
  afterAll(() => new Promise<void>((resolve) => proxy.close(() => resolve())));

  it.each([
    [503, "cannot reach the server: it answered 503 to CONNECT"],
    [403, "refused the tunnel: it answered 403 to CONNECT"],
    [
      407,
      "refused the tunnel: it answered 407 to CONNECT (its user and password in HTTPS_PROXY are missing or wrong)",
    ],
  ])(
    "fails a create the proxy answers %i as not sent, saying what the answer means",
    async (code, said) => {
      status = code;
      const { port } = proxy.address() as AddressInfo;
      const client = s3Client(
        "https://s3.example.test",
        `http://aidc:${PASSWORD}@127.0.0.1:${port}`,
      );
      const err = await client.createBucket("logs").catch((e: unknown) => e);
      client.close();
      expect(err).toMatchObject({ retryable: true, outcomeUnknown: false });
      expect((err as Error).message).toBe(
        `S3 CreateBucket of bucket logs: no answer (the proxy http://127.0.0.1:${port} of HTTPS_PROXY ${said})`,
      );
      expect(logged(err)).not.toContain(PASSWORD);
    },
  );
});

it("fails a create whose first attempt may have reached the storage as of unknown outcome, though the SDK's retry was refused", async () => {
  // The first connection is reset once the request came (the SDK retries ECONNRESET);
  // the server has stopped listening by then, so the retry is refused.
  const server = createTcpServer((socket) => {
    socket.once("data", () => {
      server.close();
      socket.resetAndDestroy();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  const client = s3Client(`http://127.0.0.1:${port}`);
  const err = await client.createBucket("logs").catch((e: unknown) => e);
  client.close();
  expect(err).toMatchObject({ retryable: true, outcomeUnknown: true });
  expect((err as Error).message).toBe(
    `S3 CreateBucket of bucket logs: no answer (connect ECONNREFUSED 127.0.0.1:${port}, after an earlier attempt that may have reached the object storage)`,
  );
});

describe("a create the SDK sent again after an attempt that may have reached the storage", () => {
  const OWNED =
    '<?xml version="1.0" encoding="UTF-8"?><Error><Code>BucketAlreadyOwnedByYou</Code><Message>Your previous request to create the named bucket succeeded and you already own it.</Message><BucketName>logs</BucketName></Error>';
  /** An S3 server that answers each CreateBucket with the next of `answers`: "reset" resets the connection once the request came. */
  async function server(answers: ("reset" | "owned")[]) {
    const s = createServer((req, res) => {
      req.resume();
      req.on("end", () => {
        if (answers.shift() === "reset") req.socket.resetAndDestroy();
        else res.writeHead(409, { "content-type": "application/xml" }).end(OWNED);
      });
    });
    await new Promise<void>((resolve) => s.listen(0, "127.0.0.1", resolve));
    return { url: `http://127.0.0.1:${(s.address() as AddressInfo).port}`, server: s };
  }

  it("takes BucketAlreadyOwnedByYou as of unknown outcome (the bucket may be its own), not as a bucket that existed", async () => {
    const { url, server: s } = await server(["reset", "owned"]);
    const client = s3Client(url);
    try {
      const err = await client.createBucket("logs").catch((e: unknown) => e);
      expect(err).toMatchObject({ retryable: true, outcomeUnknown: true });
      expect((err as Error).message).toBe(
        "S3 CreateBucket of bucket logs: BucketAlreadyOwnedByYou after an earlier attempt that may have created it",
      );
    } finally {
      client.close();
      s.close();
    }
  });

  it("answers AlreadyOwnedByYou when its one attempt met the bucket", async () => {
    const { url, server: s } = await server(["owned"]);
    const client = s3Client(url);
    try {
      expect(await client.createBucket("logs")).toBe("AlreadyOwnedByYou");
    } finally {
      client.close();
      s.close();
    }
  });
});

it("says that a proxy answering an http:// endpoint's call 407 refused its user and password, the call not sent", async () => {
  const proxy = new ConnectProxy({ "s3.example.test": "127.0.0.1" }, "aidc:right", undefined, true);
  await proxy.start();
  const port = new URL(proxy.url).port;
  const client = s3Client(
    "http://s3.example.test:9000",
    `http://aidc:${PASSWORD}@127.0.0.1:${port}`,
  );
  try {
    const err = await client.createBucket("logs").catch((e: unknown) => e);
    expect(err).toMatchObject({ retryable: true, outcomeUnknown: false });
    expect((err as Error).message).toBe(
      `S3 CreateBucket of bucket logs: no answer (the proxy http://127.0.0.1:${port} of HTTP_PROXY refused the request: it answered 407 (its user and password in HTTP_PROXY are missing or wrong))`,
    );
    expect(proxy.refused).toBe(1);
  } finally {
    client.close();
    await proxy.stop();
  }
});
