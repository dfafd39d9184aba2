import * as k8s from "@kubernetes/client-node";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { controller } from "../../src/runtime/controller.js";
import { Manager } from "../../src/runtime/manager.js";
import { patchStatus } from "../../src/runtime/object-writes.js";
import type { KubeObject } from "../../src/runtime/resource.js";
import { adminKubeConfig, createNamespace, eventually } from "../support/kube.js";
import { GIZMOS, gizmo, installGizmoCrd } from "../support/test-crd.js";

describe("the error policy after a reconcile that wrote its object and failed", () => {
  const kc = adminKubeConfig();
  let namespace = "";
  let manager: Manager | undefined;
  const attempts = new Map<string, number>();

  beforeAll(async () => {
    await installGizmoCrd(kc);
    namespace = await createNamespace(kc, "error-policy");
  });

  afterAll(async () => {
    await manager?.stop();
  });

  it("records the failure on top of the reconcile's own writes, though the cache is behind them", async () => {
    manager = new Manager({
      kubeConfig: kc,
      log: pino({ level: "silent" }),
      namespaces: [namespace],
      server: { port: 0, host: "127.0.0.1" },
      resyncPeriodMs: 0,
    });
    manager.add(
      controller("gizmos")
        .for(GIZMOS)
        .onError(async (_key, err, ctx, obj) => {
          if (!obj) return;
          await patchStatus(ctx.kube, GIZMOS, obj, {
            ...(obj.status as object),
            failed: String(err),
          });
        })
        // Each of the first attempts writes its step twice (the second write on top of
        // the first's answer) and fails at once, before the watch brings the writes back;
        // later attempts succeed without writing.
        .reconcile(async (key, ctx) => {
          const n = (attempts.get(key.name) ?? 0) + 1;
          attempts.set(key.name, n);
          if (n > 1) return {};
          let obj = ctx.cache.get<KubeObject>(GIZMOS, key);
          if (!obj) return {};
          for (const step of ["first", "second"]) {
            obj = (await patchStatus(ctx.kube, GIZMOS, obj, { ...(obj.status as object), step }))
              .object;
          }
          throw new Error(`attempt ${n} failed after its writes`);
        }),
    );
    await manager.start();
    const custom = kc.makeApiClient(k8s.CustomObjectsApi);
    const names = ["a", "b", "c", "d", "e"];
    for (const name of names) {
      await custom.createNamespacedCustomObject({
        ...GIZMOS,
        namespace,
        body: gizmo(namespace, name),
      });
    }
    const statusOf = async (name: string) =>
      ((await custom.getNamespacedCustomObject({ ...GIZMOS, namespace, name })) as KubeObject)
        .status as { step?: string; failed?: string } | undefined;
    await eventually(async () => names.every((n) => (attempts.get(n) ?? 0) >= 2));
    for (const name of names) {
      expect(await statusOf(name)).toEqual({
        step: "second",
        failed: "Error: attempt 1 failed after its writes",
      });
    }
  });
});
