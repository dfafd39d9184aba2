/**
 * What the training contract tests of src/service/kinds share: the client's task and
 * template deletes, and a NAS and a running task in the emulator to start from.
 */
import type { EmulatedService } from "../../src/emulator/harness.js";
import type { ServiceClient } from "../../src/service/client.js";
import { DEFAULT_ENDPOINTS } from "../../src/service/endpoints.js";
import { CLIENT_TOKEN_ENV } from "../../src/service/schemas/create.js";

/** The deletes of tasks and templates, which are off by default, at their default paths. */
export const TRAINING_DELETES = {
  deleteTrainingTask: DEFAULT_ENDPOINTS.deleteTrainingTask.path,
  deleteTemplate: DEFAULT_ENDPOINTS.deleteTemplate.path,
};

/** A NAS seeded straight into the emulator, mounted at /mnt/data; its id. */
export async function runningNas(svc: EmulatedService): Promise<string> {
  const [id] = (await svc.admin.seed({ nas: [{ name: "data", mountPath: "/mnt/data" }] })).nas;
  return id as string;
}

/**
 * A task ordered through `client` with `workers` workers (and `storageId` mounted at
 * /data), the clock moved past the order's delay; its id.
 */
export async function runningTask(
  svc: EmulatedService,
  client: ServiceClient,
  workers = 2,
  storageId?: string,
): Promise<string> {
  const key = await client.createTrainingTask({
    name: "resnet",
    createType: "DIRECT",
    trainingFramework: "PyTorch",
    trainingType: "PRE_TRAINING",
    productCode: "train.gpu.a100.1",
    workerCount: workers,
    image: "registry.example.com/resnet:1",
    env: { [CLIENT_TOKEN_ENV]: "token-1" },
    ...(storageId
      ? { storageConfigs: [{ storageId, mountPath: "/data", fileDirectory: "/ds" }] }
      : {}),
  });
  svc.clock?.advance(svc.emulator.state.behaviour.subscriptionDelayMs);
  const result = await client.getTrainingSubscriptionResult(key);
  return result.instanceId as string;
}
