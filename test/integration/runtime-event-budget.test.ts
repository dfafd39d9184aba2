import * as k8s from "@kubernetes/client-node";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KubeClient } from "../../src/runtime/kube.js";
import { Manager } from "../../src/runtime/manager.js";
import type { KubeObject } from "../../src/runtime/resource.js";
import { adminKubeConfig, createNamespace, eventually } from "../support/kube.js";
import { sumOf } from "../support/prometheus.js";
import { GIZMOS, gizmo, installGizmoCrd } from "../support/test-crd.js";

const waitedSeconds = (metrics: string, limiter: string) =>
  sumOf(metrics, "rest_client_rate_limiter_duration_seconds_sum", { limiter });

/**
 * Events have a Kubernetes rate budget of their own (manager.ts), as client-go's
 * recorder has its own REST client and limiter: a burst of Events never takes the
 * tokens a reconcile's writes need.
 */
describe("the Events' own rate budget", () => {
  const kc = adminKubeConfig();
  const setup = new KubeClient(kc);
  let namespace = "";
  let manager: Manager | undefined;

  beforeAll(async () => {
    await installGizmoCrd(kc);
    namespace = await createNamespace(kc, "event-budget");
  });

  afterAll(async () => {
    await manager?.stop();
  });

  it("does not delay a reconcile's write behind a burst of Events", async () => {
    const obj = await setup.create<KubeObject>(GIZMOS, gizmo(namespace, "busy", { size: 1 }));
    // 2 requests a second, burst 1: twelve Events need about 5.5 s of tokens.
    manager = new Manager({
      kubeConfig: kc,
      log: pino({ level: "silent" }),
      namespaces: [namespace],
      kubeRateLimit: { qps: 2, burst: 1 },
      server: false,
    });
    const EVENTS = 12;
    for (let i = 0; i < EVENTS; i++) manager.events.normal(obj, `Step${i}`, `step ${i}`);

    // The write the reconcile makes right after: on a shared budget it would wait ~5.5 s.
    const started = Date.now();
    await manager.kube.patch(
      GIZMOS,
      { namespace, name: "busy" },
      { metadata: { annotations: { "test.aidc.io/written": "yes" } } },
    );
    const writeMs = Date.now() - started;
    expect(writeMs).toBeLessThan(2_500);

    // The Events are paced by their own budget, and all of them are written.
    const flushStarted = Date.now();
    await manager.events.flush();
    expect(Date.now() - flushStarted).toBeGreaterThan(3_000);
    // Each limiter's waits are measured apart (rest_client_rate_limiter_duration_seconds).
    const metrics = await manager.metrics.text();
    expect(waitedSeconds(metrics, "events")).toBeGreaterThan(10);
    expect(waitedSeconds(metrics, "requests")).toBeLessThan(1);
    const api = kc.makeApiClient(k8s.EventsV1Api);
    await eventually(async () => {
      const listed = await api.listNamespacedEvent({ namespace });
      return listed.items.filter((e) => e.regarding?.name === "busy").length === EVENTS;
    });
  });
});
