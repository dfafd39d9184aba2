import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KubeClient } from "../../src/runtime/kube.js";
import type { KubeObject } from "../../src/runtime/resource.js";
import { adminKubeConfig, createNamespace, deleteNamespace } from "../support/kube.js";
import { GIZMOS, gizmo, installGizmoCrd } from "../support/test-crd.js";

/** `client`'s view for a reconcile of `flow` (never abandoned). */
const inFlow = (client: KubeClient, flow: string) =>
  client.forReconcile({ flow, signal: new AbortController().signal });

/**
 * The Kubernetes client's budget is per flow (a connection's objects, outbound-guards.ts)
 * under a ceiling shared in turn: one flow's backlog of writes spends its own bucket,
 * and another flow's write goes out at once.
 */
describe("the Kubernetes write budget per flow", () => {
  const kc = adminKubeConfig();
  const setup = new KubeClient(kc);
  let namespace = "";

  beforeAll(async () => {
    await installGizmoCrd(kc);
    namespace = await createNamespace(kc, "flow-budget");
    for (const name of ["hot", "calm"]) {
      await setup.create<KubeObject>(GIZMOS, gizmo(namespace, name, { size: 1 }));
    }
  });

  afterAll(async () => {
    if (namespace) await deleteNamespace(kc, namespace);
  });

  const annotate = (client: KubeClient, name: string, value: string) =>
    client.patch(
      GIZMOS,
      { namespace, name },
      { metadata: { annotations: { "test.aidc.io/written": value } } },
    );

  it("writes another flow's object at once beside one flow's backlog", async () => {
    // 2 writes a second per flow, burst 4: hot's 12 writes need 4 s of its tokens.
    const client = new KubeClient(kc, {
      rateLimit: { qps: 2, burst: 4, total: { qps: 100, burst: 100 } },
    });
    const started = Date.now();
    const hot = Array.from({ length: 12 }, (_, i) =>
      annotate(inFlow(client, "hot"), "hot", `w${i}`),
    );
    // calm's 4 writes take its own burst; sharing hot's budget in turn, they would get
    // every other token at 2 a second: the last one after about 4 s.
    await Promise.all(
      Array.from({ length: 4 }, (_, i) => annotate(inFlow(client, "calm"), "calm", `w${i}`)),
    );
    const calmMs = Date.now() - started;
    await Promise.all(hot);
    expect(Date.now() - started).toBeGreaterThanOrEqual(3_900);
    expect(calmMs).toBeLessThan(2_000);
  });

  it("holds all flows together to the ceiling, giving its tokens in turn", async () => {
    const client = new KubeClient(kc, {
      rateLimit: { qps: 100, burst: 100, total: { qps: 2, burst: 1 } },
    });
    const started = Date.now();
    const done: string[] = [];
    const hot = Array.from({ length: 8 }, (_, i) =>
      annotate(inFlow(client, "hot"), "hot", `c${i}`).then(() => done.push(`hot${i}`)),
    );
    // calm asks once hot's backlog waits at the ceiling; it gets the next turn.
    await new Promise((r) => setTimeout(r, 100));
    await annotate(inFlow(client, "calm"), "calm", "c0");
    done.push("calm");
    await Promise.all(hot);
    expect(Date.now() - started).toBeGreaterThanOrEqual(3_400);
    expect(done.indexOf("calm")).toBeLessThanOrEqual(3);
  });

  it("keeps a backlog's writes within the client's seats, and another flow's write takes the next seat", async () => {
    // Each request's time at the server, from the client's report of it.
    const spans: { from: number; to: number }[] = [];
    const client = new KubeClient(kc, {
      maxInFlight: 2,
      onRequest: ({ durationMs }) => spans.push({ from: Date.now() - durationMs, to: Date.now() }),
    });
    const done: string[] = [];
    const hot = Array.from({ length: 60 }, (_, i) =>
      annotate(inFlow(client, "hot"), "hot", `s${i}`).then(() => done.push(`hot${i}`)),
    );
    while (done.length < 4) await new Promise((r) => setTimeout(r, 1));
    const before = done.length;
    await annotate(inFlow(client, "calm"), "calm", "s0");
    done.push("calm");
    await Promise.all(hot);
    // Sent before hot's remaining 50-odd writes: at most the two in flight ended first.
    expect(done.indexOf("calm") - before).toBeLessThanOrEqual(4);
    expect(done).toHaveLength(61);
    const inFlight = (at: number) => spans.filter((s) => s.from < at && at < s.to).length;
    // Two seats; one more for times rounded to the millisecond (60 without seats).
    expect(Math.max(...spans.map((s) => inFlight(s.from + 0.5)))).toBeLessThanOrEqual(3);
  });
});
