/**
 * The spec's rule on a NAS mount-path change: it affects only the tasks that reference
 * the storage afterwards; a task already running keeps the path it was created with in
 * its detail and its pods' volumes.
 */
import { afterEach, describe, expect, it } from "vitest";
import { CLIENT_TOKEN_ENV } from "../../service/schemas/create.js";
import { type EmulatedService, startEmulatedService } from "../harness.js";

let svc: EmulatedService | undefined;
afterEach(async () => {
  await svc?.stop();
  svc = undefined;
});

describe("a NAS mount-path change", () => {
  it("leaves a running task's storage and pod volumes at the old path; a task created afterwards gets the new one", async () => {
    svc = await startEmulatedService({ emulator: { subscriptionDelayMs: 0 } });
    const client = svc.client;
    const [nasId] = (await svc.admin.seed({ nas: [{ name: "data", mountPath: "/data/old" }] }))
      .nas as [string];
    const start = async (name: string) => {
      const key = await client.createTrainingTask({
        name,
        createType: "DIRECT",
        productCode: "train.cpu.16",
        workerCount: 1,
        image: "i",
        storageConfigs: [{ storageId: nasId }],
        env: { [CLIENT_TOKEN_ENV]: name },
      });
      const result = await client.getTrainingSubscriptionResult(key);
      return result.instanceId as string;
    };
    const volumePaths = async (taskId: string) => {
      const pods = await client.listPods(taskId);
      const resources = await Promise.all(
        pods.map((p) => client.getPodResource(taskId, p.podName)),
      );
      return resources.flatMap((r) => r.volumes.map((v) => v.mountPath));
    };
    const before = await start("before");
    expect((await client.getTrainingTask(before)).storageConfigs?.[0]?.mountPath).toBe("/data/old");

    await client.updateNasMountPath(nasId, "/data/new");
    expect((await client.getNas(nasId)).mountPath).toBe("/data/new");

    expect((await client.getTrainingTask(before)).storageConfigs?.[0]?.mountPath).toBe("/data/old");
    expect(await volumePaths(before)).toEqual(["/data/old"]);

    const after = await start("after");
    expect((await client.getTrainingTask(after)).storageConfigs?.[0]?.mountPath).toBe("/data/new");
    expect(await volumePaths(after)).toEqual(["/data/new"]);
  });
});
