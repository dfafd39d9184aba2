/**
 * Contract: the training task operations (kinds/trainingjob.ts), client against the
 * emulator: the happy path and the service's refusals of each (pods and ports:
 * trainingjob.pods.contract.test.ts).
 */
import { describe, expect, it } from "vitest";
import { emulatorPerFile, failure } from "../../../test/support/service-contract.js";
import { runningNas, runningTask, TRAINING_DELETES } from "../../../test/support/training-tasks.js";
import type { EmulatedService } from "../../emulator/harness.js";
import type { ServiceClient } from "../client.js";
import {
  ServiceInvalidRequestError,
  ServiceNotFoundError,
  ServiceRefusedError,
} from "../errors.js";
import { CLIENT_TOKEN_ENV } from "../schemas/create.js";
import { trainingTaskSchema } from "../schemas/training.js";

let svc: EmulatedService;
let client: ServiceClient;
const DELAY = 1000;

emulatorPerFile({ manualTime: true, emulator: { subscriptionDelayMs: DELAY } }, (started) => {
  svc = started;
  client = svc.newClient({ endpoints: TRAINING_DELETES });
});

describe("createTrainingTask and getTrainingSubscriptionResult", () => {
  it("answer a key that is Pending until the delay, then Succeeded with the task id", async () => {
    const key = await client.createTrainingTask({
      name: "resnet",
      createType: "DIRECT",
      productCode: "train.cpu.16",
      workerCount: 1,
      image: "i",
    });
    expect(await client.getTrainingSubscriptionResult(key)).toEqual({ key, state: "Pending" });
    svc.clock?.advance(DELAY);
    const done = await client.getTrainingSubscriptionResult(key);
    expect(done).toMatchObject({
      key,
      state: "Succeeded",
      instanceId: expect.stringMatching(/^task-/),
    });
    expect((await client.getTrainingTask(done.instanceId as string)).status).toBe("RUNNING");
  });

  it("send the framework as trainingFramwork in the create field list's case", async () => {
    await runningTask(svc, client, 1);
    const [entry] = svc.emulator.requestLog.read({ endpoint: "createTrainingTask" });
    expect(entry?.body).toMatchObject({
      trainingFramwork: "pytorch",
      trainingType: "pre_training",
    });
    expect(entry?.body).not.toHaveProperty("trainingFramework");
  });

  it("send the COPY and TEMPLATE sources under the wire names the config gives them", async () => {
    const source = await runningTask(svc, client, 1);
    const renamed = svc.newClient({
      createTaskFields: { sourceTaskId: "copyFromTaskId", templateId: "tplId" },
    });
    const base = { name: "copy", productCode: "train.cpu.16", workerCount: 1, image: "i" };
    await renamed.createTrainingTask({ ...base, createType: "COPY", sourceTaskId: source });
    await client.createTrainingTask({ ...base, createType: "COPY", sourceTaskId: source });
    const [sent, defaults] = svc.emulator.requestLog
      .read({ endpoint: "createTrainingTask" })
      .filter((e) => (e.body as { name?: string }).name === "copy");
    expect(sent?.body).toMatchObject({ createType: "COPY", copyFromTaskId: source });
    expect(sent?.body).not.toHaveProperty("sourceTaskId");
    expect(defaults?.body).toMatchObject({ sourceTaskId: source });
  });

  it("end Failed with the service's reason when the specification is sold out", async () => {
    const key = await client.createTrainingTask({
      name: "big",
      createType: "DIRECT",
      productCode: "train.gpu.h100.1",
      workerCount: 1,
      image: "i",
    });
    svc.clock?.advance(DELAY);
    const r = await client.getTrainingSubscriptionResult(key);
    expect(r.state).toBe("Failed");
    expect(r.message).toMatch(/no H100 capacity/);
    expect(r.instanceId).toBeUndefined();
  });

  it("are refused for an unknown product, with the service's message", async () => {
    const err = await failure(
      client.createTrainingTask({
        name: "x",
        createType: "DIRECT",
        productCode: "nope",
        workerCount: 1,
        image: "i",
      }),
    );
    expect(err).toBeInstanceOf(ServiceRefusedError);
    expect((err as ServiceRefusedError).serviceMessage).toMatch(/unknown productCode nope/);
  });

  it("are refused for a storage that does not exist", async () => {
    const err = await failure(
      client.createTrainingTask({
        name: "x",
        createType: "DIRECT",
        productCode: "train.cpu.16",
        workerCount: 1,
        image: "i",
        storageConfigs: [{ storageId: "nas-missing" }],
      }),
    );
    expect((err as Error).message).toMatch(/storage nas-missing not found/);
  });

  it("refuse a priority outside 1..3 before sending anything", async () => {
    const before = svc.emulator.requestLog.lastSeq();
    const err = await failure(
      client.createTrainingTask({
        name: "x",
        createType: "DIRECT",
        productCode: "p",
        workerCount: 1,
        image: "i",
        priority: 4,
      }),
    );
    expect(err).toBeInstanceOf(ServiceInvalidRequestError);
    expect((err as Error).message).toMatch(/request\.priority/);
    expect(svc.emulator.requestLog.lastSeq()).toBe(before);
  });

  it("answer an unknown key with not-found", async () => {
    expect(await failure(client.getTrainingSubscriptionResult("sub-nope"))).toBeInstanceOf(
      ServiceNotFoundError,
    );
  });
});

describe("task detail, description, storages and template", () => {
  it("shows the task with RFC 3339 times, the token env and the mounted storage", async () => {
    const nasId = await runningNas(svc);
    const task = await client.getTrainingTask(await runningTask(svc, client, 1, nasId));
    expect(task).toMatchObject({
      trainingFramework: "PyTorch",
      trainingType: "PRE_TRAINING",
      priority: 3,
      env: { [CLIENT_TOKEN_ENV]: "token-1" },
      resource: { workerCount: 1, productCode: "train.gpu.a100.1" },
    });
    expect(task.createdTime).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(task.storageConfigs?.[0]).toMatchObject({
      id: nasId,
      mountPath: "/data",
      fileDirectory: "/ds",
      onlyRead: true,
    });
    expect(await client.listTrainingTaskStorages(task.id)).toEqual([
      expect.objectContaining({ id: nasId, name: "data" }),
    ]);
  });

  it("changes only the description", async () => {
    const id = await runningTask(svc, client, 1);
    await client.updateTrainingTaskDesc(id, "second try");
    expect(await client.getTrainingTask(id)).toMatchObject({
      desc: "second try",
      status: "RUNNING",
    });
  });

  it("saves a task as a template that the template list then shows", async () => {
    const id = await runningTask(svc, client, 1);
    const before = await client.calls.templates.listSnapshot(60_000);
    expect(before?.records.size).toBe(0);
    await client.saveTrainingTaskAsTemplate(id, { name: "resnet-tpl", desc: "from a run" });
    // The save drops the list snapshot, as a template create does: read anew, it shows it.
    const after = await client.calls.templates.listSnapshot(60_000);
    expect([...(after?.records.values() ?? [])].map((t) => t.name)).toEqual(["resnet-tpl"]);
    const { records } = await client.listTemplates({ name: "resnet" });
    expect(records).toEqual([
      expect.objectContaining({
        name: "resnet-tpl",
        trainingFramework: "PyTorch",
        image: "registry.example.com/resnet:1",
      }),
    ]);
  });

  it.each([
    ["getTrainingTask", (c: ServiceClient) => c.getTrainingTask("task-404")],
    ["updateTrainingTaskDesc", (c: ServiceClient) => c.updateTrainingTaskDesc("task-404", "d")],
    [
      "saveTrainingTaskAsTemplate",
      (c: ServiceClient) => c.saveTrainingTaskAsTemplate("task-404", { name: "n" }),
    ],
    ["listTrainingTaskStorages", (c: ServiceClient) => c.listTrainingTaskStorages("task-404")],
    ["listPods", (c: ServiceClient) => c.listPods("task-404")],
    ["deleteTrainingTask", (c: ServiceClient) => c.deleteTrainingTask("task-404")],
  ])("%s of an unknown task is not-found, naming the id", async (_name, call) => {
    const err = await failure(call(client));
    expect(err).toBeInstanceOf(ServiceNotFoundError);
    expect((err as Error).message).toMatch(/task-404 not found/);
  });

  it("deletes a task when the delete operation is configured", async () => {
    const id = await runningTask(svc, client, 1);
    await client.deleteTrainingTask(id);
    expect(await failure(client.getTrainingTask(id))).toBeInstanceOf(ServiceNotFoundError);
  });
});

describe("the task list", () => {
  it("pages through every task and finds one by its client token", async () => {
    await svc.admin.seed({
      tasks: Array.from({ length: 23 }, (_, i) => ({
        name: `job-${i}`,
        env: { [CLIENT_TOKEN_ENV]: `tok-${i}` },
      })),
    });
    const page = await client.listTrainingTasks({ pageNo: 3, pageSize: 10 });
    expect(page).toMatchObject({ pageNo: 3, pageSize: 10, totalRows: 23 });
    expect(page.records).toHaveLength(3);
    const all: string[] = [];
    for await (const t of client.iterateTrainingTasks({ pageSize: 7 })) all.push(t.name as string);
    expect(all).toHaveLength(23);
    const ids = await client.findTrainingTaskIdsByClientToken("tok-17");
    expect(ids).toHaveLength(1);
    expect((await client.getTrainingTask(ids?.[0] as string)).name).toBe("job-17");
    expect(await client.provesTrainingTaskTokenAbsent("tok-17")).toBe(false);
    expect(await client.provesTrainingTaskTokenAbsent("tok-never-sent")).toBe(true);
  });

  it("finds a token by reading in detail, once, each task a list answers without env, keeping its env while the list shows it", async () => {
    const ids = (
      await svc.admin.seed({
        tasks: Array.from({ length: 5 }, (_, i) => ({
          name: `job-${i}`,
          env: { [CLIENT_TOKEN_ENV]: `tok-${i}` },
        })),
      })
    ).tasks;
    svc.emulator.state.behaviour.listsOmitEnv = true;
    const details = () => svc.emulator.requestLog.read({ endpoint: "getTrainingTask" }).length;
    // An account of its own: what another test's account kept stays out.
    const own = svc.newClient();
    const kept = own.calls.account.lists.of("listTrainingTasks", trainingTaskSchema, (t) => t.id);
    try {
      const page = await own.listTrainingTasks({});
      expect(page.records.map((t) => t.env)).toEqual(Array(5).fill(undefined));
      expect(await own.findTrainingTaskIdsByClientToken("tok-3")).toEqual([ids[3]]);
      expect(details()).toBe(5);
      // A proof's two walks, and a lookup again: the envs kept answer.
      expect(await own.provesTrainingTaskTokenAbsent("tok-3")).toBe(false);
      expect(await own.provesTrainingTaskTokenAbsent("tok-never-sent")).toBe(true);
      expect(await own.provesTrainingTaskTokenAbsent("tok-never-sent")).toBe(true);
      expect(await own.findTrainingTaskIdsByClientToken("tok-3")).toEqual([ids[3]]);
      expect(details()).toBe(5);
      // A task gone from a complete walk of the whole list is forgotten.
      await client.deleteTrainingTask(ids[0] as string);
      expect(await own.provesTrainingTaskTokenAbsent("tok-0")).toBe(true);
      expect(kept.details.ids().sort()).toEqual(ids.slice(1).sort());
    } finally {
      svc.emulator.state.behaviour.listsOmitEnv = false;
    }
  });

  it("skips, proving nothing absent, a task listed without env whose detail does not know it", async () => {
    svc.emulator.state.behaviour.listsOmitEnv = true;
    svc.emulator.state.behaviour.detailVisibilityDelayMs = DELAY;
    try {
      // Listed at once, its detail unknown until DELAY after its order resolves (an
      // account of its own: what another test's account kept stays out).
      const own = svc.newClient();
      const key = await own.createTrainingTask({
        name: "fresh",
        createType: "DIRECT",
        productCode: "train.gpu.a100.1",
        workerCount: 1,
        image: "registry.example.com/resnet:1",
        env: { [CLIENT_TOKEN_ENV]: "tok-new" },
      });
      expect(await own.findTrainingTaskIdsByClientToken("tok-new")).toEqual([]);
      expect(await own.provesTrainingTaskTokenAbsent("tok-never-sent")).toBe(false);
      svc.clock?.advance(DELAY);
      expect((await own.getTrainingSubscriptionResult(key)).state).toBe("Succeeded");
      svc.clock?.advance(DELAY);
      expect(await own.findTrainingTaskIdsByClientToken("tok-new")).toHaveLength(1);
      expect(await own.provesTrainingTaskTokenAbsent("tok-never-sent")).toBe(true);
    } finally {
      svc.emulator.state.behaviour.listsOmitEnv = false;
      svc.emulator.state.behaviour.detailVisibilityDelayMs = 0;
    }
  });

  it("cannot look up by token when the task list is disabled", async () => {
    expect(
      await svc
        .newClient({ endpoints: { listTrainingTasks: null } })
        .findTrainingTaskIdsByClientToken("t"),
    ).toBeUndefined();
    const off = svc.newClient({ endpoints: { listTrainingTasks: null } });
    expect(await off.provesTrainingTaskTokenAbsent("t")).toBeUndefined();
  });

  it("refuses page 0 (pages start at 1)", async () => {
    expect(await failure(client.listTrainingTasks({ pageNo: 0 }))).toBeInstanceOf(
      ServiceRefusedError,
    );
  });
});
