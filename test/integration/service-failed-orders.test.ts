/**
 * The operator against a service whose failed orders leave what they made: the result
 * says Failed and names nothing, but the task or NAS shows in the list and the detail
 * (status FAILED, Failed). The object says so (a CreateFailed Warning naming the
 * resource, the subscription Failed in its status, Ready=False from the resource's
 * state), is bound to it and orders nothing more; under deletionPolicy Delete its
 * deletion removes the half-made resource, also when the object was deleted while the
 * order was pending; under Orphan the resource is kept.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { nasVolumeController } from "../../src/controllers/nasvolume/controller.js";
import { trainingJobController } from "../../src/controllers/trainingjob/controller.js";
import { nasVolumeCrd } from "../../src/crds/nasvolume.js";
import { trainingJobCrd } from "../../src/crds/trainingjob.js";
import type { KubeObject } from "../../src/runtime/resource.js";
import { adminKubeConfig, createNamespace } from "../support/kube.js";
import { conditionOf, ObjectsOf } from "../support/managed.js";
import { startTestOperator, type TestOperator } from "../support/operator.js";

const specs = {
  nas: { productCode: "nas.capacity.standard", capacityGB: 100 },
  task: { image: "registry.example.com/ml/train:1", productCode: "train.cpu.16", workerCount: 1 },
};
type Kind = keyof typeof specs;

describe("a service whose failed orders leave half-made resources", () => {
  let op: TestOperator;
  let objects: Record<Kind, ObjectsOf>;

  beforeAll(async () => {
    const namespace = await createNamespace(adminKubeConfig(), "service-failed-orders");
    op = await startTestOperator({
      controllers: [nasVolumeController, trainingJobController],
      namespaces: [namespace],
      // Orders stay pending until a test fails them.
      emulatorOptions: { subscriptionDelayMs: 600_000, failedOrdersLeaveResources: true },
      service: {
        endpoints: {
          deleteNas: "DELETE /v1/nasStorage/instance/{id}",
          deleteTrainingTask: "DELETE /v1/training/instance/{id}",
        },
      },
    });
    objects = {
      nas: new ObjectsOf(op.kube, nasVolumeCrd, namespace),
      task: new ObjectsOf(op.kube, trainingJobCrd, namespace),
    };
  }, 60_000);
  afterAll(async () => {
    await op?.stop();
  });

  const annotation = (o: KubeObject | undefined, name: string) =>
    o?.metadata?.annotations?.[`aidc.io/${name}`];
  const named = (kind: Kind, name: string) =>
    kind === "nas"
      ? [...op.emulator.state.nas.values()].filter((n) => n.name === name).map((n) => n.id)
      : [...op.emulator.state.tasks.values()].filter((t) => t.name === name).map((t) => t.id);
  /** Creates `name` of `kind` and fails its order once it is placed. */
  async function failedOrder(kind: Kind, name: string, deletionPolicy: string) {
    await objects[kind].create(name, { ...specs[kind], deletionPolicy });
    const ordered = await objects[kind].waitFor(
      name,
      (o) => annotation(o, "subscription-key") !== undefined,
    );
    return annotation(ordered, "subscription-key") ?? "";
  }

  it.each(["nas", "task"] as Kind[])(
    "binds the %s a failed order left, says so, orders nothing more and deletes it under Delete",
    async (kind) => {
      const name = `left-${kind}`;
      const key = await failedOrder(kind, name, "Delete");
      await op.admin.resolveSubscription(key, "Failed", "quota exceeded");
      const [made] = named(kind, name);
      const outcome = (o: KubeObject) =>
        (o.status as { subscription?: { outcome?: string } } | undefined)?.subscription?.outcome;
      const bound = await objects[kind].waitFor(
        name,
        (o) => annotation(o, "external-id") === made && outcome(o) === "Failed",
      );
      expect(conditionOf(bound, "Ready")?.status).toBe("False");
      expect((bound.status as { subscription?: unknown }).subscription).toMatchObject({
        outcome: "Failed",
        message: "quota exceeded",
      });
      await objects[kind].waitForEvents(name, ["CreateFailed"]);
      // A second look changes nothing: still one resource of the name.
      await new Promise((r) => setTimeout(r, 3_000));
      expect(named(kind, name)).toEqual([made]);
      await objects[kind].delete(name);
      await objects[kind].waitForGone(name);
      expect(named(kind, name)).toEqual([]);
    },
  );

  it("keeps the NAS a failed order left under Orphan", async () => {
    const key = await failedOrder("nas", "left-orphan", "Orphan");
    await op.admin.resolveSubscription(key, "Failed", "quota exceeded");
    const [made] = named("nas", "left-orphan");
    await objects.nas.waitFor("left-orphan", (o) => annotation(o, "external-id") === made);
    await objects.nas.delete("left-orphan");
    await objects.nas.waitForGone("left-orphan");
    expect(named("nas", "left-orphan")).toEqual([made]);
  });

  it.each(["nas", "task"] as Kind[])(
    "deletes the %s a failed order left when the object was deleted while the order was pending",
    async (kind) => {
      const name = `gone-${kind}`;
      const key = await failedOrder(kind, name, "Delete");
      await objects[kind].delete(name);
      await objects[kind].waitFor(name, (o) => conditionOf(o, "Ready")?.reason === "Deleting");
      await op.admin.resolveSubscription(key, "Failed", "quota exceeded");
      await objects[kind].waitForGone(name);
      expect(named(kind, name)).toEqual([]);
    },
  );
});
