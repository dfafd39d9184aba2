/**
 * One attempt of the S3 client is bounded by `timeoutMs` (ObjectStorageOptions): an
 * endpoint that takes the request and never answers fails it, rather than holding the
 * reconcile with no more than a warning of the SDK's printed on stderr.
 */
import { createServer, type Server, type Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { ObjectStorageClient } from "./object-storage.js";

let server: Server;
const sockets = new Set<Socket>();
let endpoint = "";

beforeAll(async () => {
  server = createServer((socket) => {
    sockets.add(socket);
    socket.resume();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  endpoint = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});
afterAll(async () => {
  for (const s of sockets) s.destroy();
  await new Promise((resolve) => server.close(resolve));
});

describe("the S3 client's timeout", () => {
  it("fails an attempt the endpoint does not answer within timeoutMs, and prints nothing", async () => {
    const warn = vi.spyOn(console, "warn").mockImplementation(() => undefined);
    const client = new ObjectStorageClient({
      endpoint,
      region: "us-east-1",
      credentials: async () => ({ accessKeyId: "AKIDTEST", secretAccessKey: "secret-test-key" }),
      timeoutMs: 200,
    });
    try {
      await expect(client.headBucket("held")).rejects.toThrow(/requestTimeout/);
      expect(warn).not.toHaveBeenCalled();
    } finally {
      client.close();
      warn.mockRestore();
    }
  }, 10_000);
});
