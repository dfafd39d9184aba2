import { mkdtemp, readFile, rm } from "node:fs/promises";
import http2 from "node:http2";
import type { Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { generateCerts } from "../controlplane/certs.js";
import type { KubeConfigLike } from "./kube-credentials.js";
import { KubeTransport } from "./kube-transport.js";

let dir: string;
let key: Buffer;
let cert: Buffer;
let ca: Buffer;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "kube-goaway-"));
  const certs = await generateCerts(dir);
  key = await readFile(certs.serverKey);
  cert = await readFile(certs.serverCert);
  ca = await readFile(certs.caCert);
});
afterAll(() => rm(dir, { recursive: true, force: true }));

const closers: (() => unknown)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

/**
 * An HTTP/2 server that sends GOAWAY as kube-apiserver's --goaway-chance does (an
 * answer, and a GOAWAY naming its stream the last processed), on cue: on the first
 * session, `/hold` is held until `/goaway` comes, which answers the held one with the
 * GOAWAY (so `/goaway` itself is left unprocessed); on every later session, each answer.
 * A watch stays open; `/slow` is answered 500 ms after it came; anything else at once.
 * With `idleGoawayMs`, a later session also gets a GOAWAY that long after it began, as a
 * server closing an idle connection (naming stream 0 when it carried none).
 */
async function goawayServer(idleGoawayMs?: number) {
  const seen: { method: string; path: string; session: number }[] = [];
  const sessions: http2.ServerHttp2Session[] = [];
  let held: http2.ServerHttp2Stream | undefined;
  const server = http2.createSecureServer({ key, cert });
  server.on("session", (s) => {
    sessions.push(s);
    if (idleGoawayMs !== undefined && sessions.length > 1) {
      setTimeout(() => s.goaway(http2.constants.NGHTTP2_NO_ERROR), idleGoawayMs);
    }
  });
  server.on("stream", (stream, headers) => {
    stream.on("error", () => undefined);
    const path = String(headers[":path"]);
    const session = sessions.indexOf(stream.session as http2.ServerHttp2Session);
    seen.push({ method: String(headers[":method"]), path, session });
    const answer = (s: http2.ServerHttp2Stream) => {
      if (s.destroyed) return;
      s.respond({ ":status": 200 });
      s.end("{}");
    };
    if (path.includes("watch=true")) return stream.respond({ ":status": 200 });
    if (path === "/slow") return void setTimeout(() => answer(stream), 500);
    if (path === "/hold") {
      held = stream;
      return;
    }
    if (path === "/goaway" && session === 0 && held) {
      answer(held);
      stream.session?.goaway(http2.constants.NGHTTP2_NO_ERROR, held.id);
      return;
    }
    answer(stream);
    if (session > 0) stream.session?.goaway(http2.constants.NGHTTP2_NO_ERROR, stream.id);
  });
  const sockets = new Set<Socket>();
  server.on("connection", (s: Socket) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  closers.push(
    () =>
      new Promise((r) => {
        for (const s of sockets) s.destroy();
        server.close(r);
      }),
  );
  const port = (server.address() as { port: number }).port;
  const config: KubeConfigLike = {
    getCurrentCluster: () => ({ server: `https://127.0.0.1:${port}` }),
    applyToHTTPSOptions: async (o: object) => {
      Object.assign(o, { ca, headers: { Authorization: "Bearer t0ken" } });
    },
  };
  const t = new KubeTransport(config);
  closers.push(() => t.connections.close());
  // A request first: the watch's stream is not the first of its session.
  await t.request("GET", "/api");
  let watchEnded: unknown = "running";
  await t.watch(
    "/api/v1/pods",
    {},
    () => undefined,
    (err) => {
      watchEnded = err;
    },
  );
  return { t, seen, held: () => held, watch: () => watchEnded };
}

/** Sends `/hold`, then `/goaway` once the server holds it; resolves with both answers' statuses. */
async function goaway(t: KubeTransport, held: () => unknown): Promise<number[]> {
  const hold = t.request("GET", "/hold");
  await vi.waitFor(() => expect(held()).toBeDefined());
  const unprocessed = t.request("PATCH", "/goaway", "{}");
  return [(await hold).status, (await unprocessed).status];
}

describe("a request a GOAWAY left unprocessed", () => {
  it("is answered on the current connection, and the watches of the retired one keep running", async () => {
    const { t, seen, held, watch } = await goawayServer();
    expect(await goaway(t, held)).toEqual([200, 200]);
    // Sent again once, not on the retired connection's own second session.
    const sent = seen.filter((s) => s.path === "/goaway");
    expect(sent.length).toBe(2);
    await new Promise((r) => setTimeout(r, 200));
    expect(watch()).toBe("running");
  });

  it("resumes a watch of the retired connection that undici ends at a GOAWAY on its idle second session", async () => {
    const { t, held, watch } = await goawayServer(300);
    expect(await goaway(t, held)).toEqual([200, 200]);
    await new Promise((r) => setTimeout(r, 600));
    // Ended as a cut (the informer resumes at once at its resourceVersion), not failed.
    expect(watch()).toBeNull();
  });

  it("does not send again a write the retired connection is still waiting the answer of", async () => {
    const { t, seen, held } = await goawayServer();
    const slow = t.request("PATCH", "/slow", "{}");
    await vi.waitFor(() => expect(seen.some((s) => s.path === "/slow")).toBe(true));
    expect(await goaway(t, held)).toEqual([200, 200]);
    expect((await slow).status).toBe(200);
    expect(seen.filter((s) => s.path === "/slow").length).toBe(1);
  });
});
