import { afterEach, describe, expect, it } from "vitest";
import { CLIENT_TOKEN_ENV } from "../service/schemas/create.js";
import { type EmulatedService, startEmulatedService } from "./harness.js";
import { EmulatorState } from "./state.js";

let svc: EmulatedService | undefined;
afterEach(async () => {
  await svc?.stop();
  svc = undefined;
});

describe("the emulator's time-driven state", () => {
  it("keeps a task PENDING without pods until its subscription resolves, then RUNNING with pods", async () => {
    svc = await startEmulatedService({ manualTime: true, emulator: { subscriptionDelayMs: 5000 } });
    const key = await svc.client.createTrainingTask({
      name: "t",
      createType: "DIRECT",
      productCode: "train.cpu.16",
      workerCount: 3,
      image: "i",
      env: { [CLIENT_TOKEN_ENV]: "tok" },
    });
    const [listed] = (await svc.client.listTrainingTasks()).records;
    expect(listed?.status).toBe("PENDING");
    expect(await svc.client.listPods(listed?.id as string)).toEqual([]);
    svc.clock?.advance(4999);
    expect((await svc.client.getTrainingSubscriptionResult(key)).state).toBe("Pending");
    svc.clock?.advance(1);
    expect((await svc.client.getTrainingSubscriptionResult(key)).state).toBe("Succeeded");
    expect(await svc.client.listPods(listed?.id as string)).toHaveLength(3);
  });

  it("with taskStartDelayMs, keeps a task whose order succeeded PENDING without pods that long, then RUNNING with pods", async () => {
    svc = await startEmulatedService({
      manualTime: true,
      emulator: { subscriptionDelayMs: 0, taskStartDelayMs: 3000 },
    });
    const key = await svc.client.createTrainingTask({
      name: "late",
      createType: "DIRECT",
      productCode: "train.cpu.16",
      workerCount: 2,
      image: "i",
      env: { [CLIENT_TOKEN_ENV]: "late" },
    });
    const result = await svc.client.getTrainingSubscriptionResult(key);
    expect(result.state).toBe("Succeeded");
    const id = result.state === "Succeeded" ? (result.instanceId as string) : "";
    expect(await svc.client.getTrainingTask(id)).toMatchObject({ status: "PENDING" });
    svc.clock?.advance(2999);
    expect(await svc.client.listPods(id)).toEqual([]);
    svc.clock?.advance(1);
    expect(await svc.client.getTrainingTask(id)).toMatchObject({ status: "RUNNING" });
    expect(await svc.client.listPods(id)).toHaveLength(2);
  });

  it("hides new resources from list operations for the visibility delay, not from detail", async () => {
    svc = await startEmulatedService({
      manualTime: true,
      emulator: { listVisibilityDelayMs: 3000, idTag: "" },
    });
    await svc.client.subscribeNas({
      productCode: "nas.fixed.200",
      storageParams: { description: "[aidc-token:x]" },
    });
    expect(await svc.client.findNasIdsByClientToken("x")).toEqual([]);
    expect(await svc.client.getNas("nas-000001")).toMatchObject({ id: "nas-000001" });
    svc.clock?.advance(3000);
    expect(await svc.client.findNasIdsByClientToken("x")).toEqual(["nas-000001"]);
  });

  it("answers an unknown id for a new NAS until the detail delay after its order succeeded", async () => {
    svc = await startEmulatedService({
      manualTime: true,
      emulator: { subscriptionDelayMs: 1000, detailVisibilityDelayMs: 3000, idTag: "" },
    });
    const key = await svc.client.subscribeNas({ productCode: "nas.fixed.200" });
    const unknown = () =>
      svc?.client.getNas("nas-000001").then(
        () => "known",
        () => "unknown",
      );
    expect(await unknown()).toBe("unknown");
    svc.clock?.advance(1000);
    expect(await svc.client.getNasSubscriptionResult(key)).toMatchObject({
      state: "Succeeded",
      instanceId: "nas-000001",
    });
    svc.clock?.advance(2999);
    expect(await unknown()).toBe("unknown");
    svc.clock?.advance(1);
    expect(await svc.client.getNas("nas-000001")).toMatchObject({ status: "Running" });
  });

  it("shows an accepted NAS scale in the quota after the scale delay, refusing another meanwhile", async () => {
    svc = await startEmulatedService({
      manualTime: true,
      emulator: { subscriptionDelayMs: 0, nasScaleDelayMs: 3000, idTag: "" },
    });
    await svc.client.subscribeNas({ productCode: "nas.capacity.standard" });
    const scale = () =>
      svc?.client.scaleNas("nas-000001", { scaleType: "ScaleUp", capacity: 50 }).then(
        () => "accepted",
        (err: { code?: number }) => err.code,
      );
    const quota = async () => (await svc?.client.getNas("nas-000001"))?.quota;
    const before = await quota();
    expect(await scale()).toBe("accepted");
    expect(await scale()).toBe(409);
    svc.clock?.advance(2999);
    expect(await quota()).toBe(before);
    svc.clock?.advance(1);
    expect(await quota()).toBe(String(Number(before) + 50));
  });

  it("shows a deleted NAS as Releasing in detail and list for the release delay, then not at all", async () => {
    svc = await startEmulatedService({
      manualTime: true,
      emulator: { nasReleaseDelayMs: 3000, idTag: "" },
    });
    await svc.client.subscribeNas({
      productCode: "nas.fixed.200",
      storageParams: { description: "[aidc-token:r]" },
    });
    svc.emulator.state.deleteNas("nas-000001");
    svc.emulator.state.deleteNas("nas-000001");
    expect(await svc.client.getNas("nas-000001")).toMatchObject({ status: "Releasing" });
    svc.clock?.advance(2999);
    expect(await svc.client.findNasIdsByClientToken("r")).toEqual(["nas-000001"]);
    svc.clock?.advance(1);
    expect(await svc.client.findNasIdsByClientToken("r")).toEqual([]);
    await expect(svc.client.getNas("nas-000001")).rejects.toThrow(/not found|404/i);
  });

  it("shows a deleted task as DELETING and a deleted template for the release delay, refusing a repeat", async () => {
    svc = await startEmulatedService({
      manualTime: true,
      emulator: { subscriptionDelayMs: 0, taskReleaseDelayMs: 3000, repeatDeleteStatus: 409 },
      client: {
        endpoints: {
          deleteTrainingTask: "DELETE /v1/training/instance/{id}",
          deleteTemplate: "DELETE /v1/training/template/{id}",
        },
      },
    });
    const { client, clock } = svc;
    const { state } = svc.emulator;
    await client.createTrainingTask({
      name: "t",
      createType: "DIRECT",
      productCode: "train.cpu.16",
      workerCount: 1,
      image: "i",
    });
    await client.createTemplate({ name: "bert", image: "i" });
    const [taskId = ""] = state.tasks.keys();
    const [templateId = ""] = state.templates.keys();
    await client.deleteTrainingTask(taskId);
    await client.deleteTemplate(templateId);
    expect(await client.getTrainingTask(taskId)).toMatchObject({ status: "DELETING" });
    await expect(client.deleteTrainingTask(taskId)).rejects.toMatchObject({ code: 409 });
    await expect(client.deleteTemplate(templateId)).rejects.toMatchObject({ code: 409 });
    clock?.advance(2999);
    expect([...((await client.listTrainingTaskIds())?.ids ?? [])]).toEqual([taskId]);
    expect((await client.listTemplates())?.records).toHaveLength(1);
    clock?.advance(1);
    expect([...((await client.listTrainingTaskIds())?.ids ?? [])]).toEqual([]);
    expect((await client.listTemplates())?.records).toHaveLength(0);
    await expect(client.getTrainingTask(taskId)).rejects.toThrow(/not found|404/i);
  });

  it.each([false, true])(
    "removes the NAS and task of a failed order, or with failedOrdersLeaveResources %s leaves them failed",
    async (leave) => {
      svc = await startEmulatedService({
        emulator: { subscriptionDelayMs: 60_000, idTag: "", failedOrdersLeaveResources: leave },
      });
      const nasKey = await svc.client.subscribeNas({
        productCode: "nas.fixed.200",
        storageParams: { description: "[aidc-token:f]" },
      });
      const taskKey = await svc.client.createTrainingTask({
        name: "t",
        createType: "DIRECT",
        productCode: "train.cpu.16",
        workerCount: 1,
        image: "i",
        env: { [CLIENT_TOKEN_ENV]: "f" },
      });
      for (const key of [nasKey, taskKey]) {
        await svc.admin.resolveSubscription(key, "Failed", "no capacity");
      }
      const nasResult = await svc.client.getNasSubscriptionResult(nasKey);
      expect(nasResult).toMatchObject({ state: "Failed", message: "no capacity" });
      expect(nasResult.instanceId).toBeUndefined();
      expect(await svc.client.findNasIdsByClientToken("f")).toEqual(leave ? ["nas-000001"] : []);
      if (!leave) return;
      expect(await svc.client.getNas("nas-000001")).toMatchObject({ status: "Failed" });
      expect(await svc.client.getTrainingTask("task-000001")).toMatchObject({ status: "FAILED" });
    },
  );

  it("hands out the same keys and addresses under the same random seed and id tag", async () => {
    const keys: string[] = [];
    for (let run = 0; run < 2; run++) {
      svc = await startEmulatedService({ emulator: { randomSeed: 7, idTag: "pinned" } });
      keys.push(await svc.client.subscribeNas({ productCode: "nas.fixed.200" }));
      await svc.stop();
      svc = undefined;
    }
    expect(keys[0]).toBe(keys[1]);
  });

  it("holds 500 NAS and 500 tasks and serves every page of them", async () => {
    svc = await startEmulatedService();
    await svc.admin.seed({
      nas: Array.from({ length: 500 }, (_, i) => ({ name: `vol${i}` })),
      tasks: Array.from({ length: 500 }, (_, i) => ({
        name: `job-${i}`,
        env: { [CLIENT_TOKEN_ENV]: `t${i}` },
      })),
    });
    let nas = 0;
    for await (const _ of svc.client.iterateNas({ pageSize: 100 })) nas++;
    let tasks = 0;
    for await (const _ of svc.client.iterateTrainingTasks({ pageSize: 100 })) tasks++;
    expect([nas, tasks]).toEqual([500, 500]);
    expect(await svc.client.findTrainingTaskIdsByClientToken("t499", "job-499")).toHaveLength(1);
  });
});

describe("the records of a kind with an emulator module of its own (src/emulator/kinds)", () => {
  it("are kept per kind and emptied by a reset", () => {
    const state = new EmulatorState();
    state.records("widget").set("w-1", { id: "w-1", fields: { id: "w-1" } });
    expect(state.records("widget").get("w-1")?.fields).toEqual({ id: "w-1" });
    expect(state.records("gadget").size).toBe(0);
    state.reset();
    expect(state.records("widget").size).toBe(0);
  });
});
