import { pino } from "pino";
import { describe, expect, it } from "vitest";
import type { AccountCalls } from "../../service/account.js";
import {
  OperationAvailability,
  ServiceNotFoundError,
  ServiceOperationMissingError,
  ServiceRefusedError,
} from "../../service/index.js";
import type { OperationState } from "../../service/operation-caller.js";
import { trainingJobClient } from "./external.js";
import type { TrainingJobObject } from "./objects.js";

function job(exposePorts: boolean, serviceName?: string): TrainingJobObject {
  return {
    apiVersion: "aidc.io/v1alpha1",
    kind: "TrainingJob",
    metadata: { name: "j", namespace: "ns" },
    spec: { createType: "DIRECT", priority: 3, exposePorts, deletionPolicy: "Orphan" },
    // A job whose status shows its task already (not the first look at it).
    status: {
      taskId: "task-1",
      pods: [
        { name: "p", ports: [{ port: 80, custom: true, ...(serviceName ? { serviceName } : {}) }] },
      ],
    },
  };
}

/** A service double: the calls the observe and update steps make. */
function fakeService(over: Partial<Record<string, unknown>> = {}) {
  const calls: string[] = [];
  const reads: string[] = [];
  const svc = {
    getTrainingTask: async (id: string) => {
      reads.push("task");
      return { id, status: "RUNNING", desc: "" };
    },
    listTrainingTaskStorages: async () => {
      reads.push("storages");
      return [];
    },
    listPods: async () => {
      reads.push("pods");
      return [{ podName: "p0" }, { podName: "p1" }];
    },
    getPodResource: async (_id: string, pod: string) => {
      if (pod === "p1")
        throw new ServiceNotFoundError("pod gone", { endpoint: "getPodResource", code: 404 });
      return { containers: [], volumes: [] };
    },
    listPodOpenPorts: async () => ({ ports: [], customPorts: [] }),
    // No task list unless a test gives one.
    taskListSnapshot: async () => undefined,
    isEndpointEnabled: () => true,
    operationState: (): OperationState => "present",
    operations: new OperationAvailability(),
    openPodPort: async (_id: string, pod: string, req: { port: number }) => {
      calls.push(`open ${pod} ${req.port}`);
      throw new ServiceRefusedError("already open", { endpoint: "openPodPort", code: 409 });
    },
    updateTrainingTaskDesc: async (_id: string, desc: string) => {
      calls.push(`desc ${desc}`);
    },
    ...over,
  };
  const tasks = {
    get: svc.getTrainingTask,
    storages: svc.listTrainingTaskStorages,
    listSnapshot: svc.taskListSnapshot,
    updateDesc: svc.updateTrainingTaskDesc,
  };
  const pods = {
    list: svc.listPods,
    resource: svc.getPodResource,
    openPorts: svc.listPodOpenPorts,
    openPort: svc.openPodPort,
  };
  const { isEndpointEnabled, operationState, operations } = svc;
  const account = { tasks, pods, isEndpointEnabled, operationState, operations };
  return { svc: account as unknown as AccountCalls, calls, reads };
}

function call(obj: TrainingJobObject) {
  return {
    obj,
    refs: undefined,
    now: () => new Date("2026-01-01T00:00:00Z"),
    log: pino({ level: "silent" }),
    normal: () => {},
    warning: () => {},
    annotate: async () => obj,
  };
}

describe("the TrainingJob external client", () => {
  it("observes the pods still there when one vanished between the list and its detail", async () => {
    const { svc } = fakeService();
    const client = trainingJobClient(svc);
    const o = await client.observe(call(job(false)), "task-1");
    expect(o.exists && o.remote.status.pods?.map((p) => p.name)).toEqual(["p0"]);
    expect(o.exists && o.ready.reason).toBe("TaskRunning");
  });

  it("wants an update for a new description and sends only it", async () => {
    const { svc, calls } = fakeService();
    const client = trainingJobClient(svc);
    const j = { ...job(false), spec: { ...job(false).spec, description: "new" } };
    const o = await client.observe(call(j), "task-1");
    if (!o.exists) throw new Error("not observed");
    expect(o.upToDate).toBe(false);
    expect(await client.update(call(j), "task-1", o.remote)).toEqual({
      outcome: "Applied",
      message: "description updated",
    });
    expect(calls).toEqual(["desc new"]);
  });

  /** A job wanting port 8888/http on its one pod, whose open ports read `open` after the first read. */
  const refusedOpen = (open: { port: number; protocol: string }[]) => {
    let portReads = 0;
    const { svc, calls } = fakeService({
      listPods: async () => [{ podName: "p0" }],
      listPodOpenPorts: async () => ({ ports: [], customPorts: portReads++ === 0 ? [] : open }),
    });
    const j = {
      ...job(false),
      spec: { ...job(false).spec, ports: [{ port: 8888, protocol: "http" as const }] },
    };
    return { client: trainingJobClient(svc), calls, j };
  };

  it("counts a port the service refuses (409) as opened when the pod's ports, read again, show it open", async () => {
    const { client, calls, j } = refusedOpen([{ port: 8888, protocol: "HTTP" }]);
    const o = await client.observe(call(j), "task-1");
    if (!o.exists) throw new Error("not observed");
    const r = await client.update(call(j), "task-1", o.remote);
    expect(r.outcome).toBe("Applied");
    expect(calls).toEqual(["open p0 8888"]);
  });

  it("keeps a 409 on a port open as a refusal when the pod's ports, read again, do not show it (or with another protocol)", async () => {
    for (const open of [[], [{ port: 8888, protocol: "https" }]]) {
      const { client, calls, j } = refusedOpen(open);
      const o = await client.observe(call(j), "task-1");
      if (!o.exists) throw new Error("not observed");
      await expect(client.update(call(j), "task-1", o.remote)).rejects.toThrow("already open");
      expect(calls).toEqual(["open p0 8888"]);
    }
  });

  const missing = (endpoint: string) =>
    new ServiceOperationMissingError(`no ${endpoint}`, { endpoint, code: 404 });

  it("observes a task whose pod list the service does not answer, leaving pods out with a note", async () => {
    const { svc } = fakeService({
      listPods: async () => {
        throw missing("listPods");
      },
    });
    const withOldPods = job(false);
    const o = await trainingJobClient(svc).observe(call(withOldPods), "task-1");
    if (!o.exists) throw new Error("not observed");
    expect(o.ready.reason).toBe("TaskRunning");
    expect(o.remote.status.pods).toBeUndefined();
    expect(o.remote.observation.note).toMatch(/listPods .*service\.endpoints\.listPods/);
  });

  /** A job whose status shows exactly what the listed task {id, RUNNING} implies. */
  const shown = () => ({
    ...job(false),
    status: { ...job(false).status, remoteStatus: "RUNNING" },
  });
  /** A task list of task `id`, {id, RUNNING}, its record with an empty env unless `listed` says otherwise. */
  const listing =
    (id: string, listed: object = { env: {} }) =>
    async () => ({
      records: new Map([[id, { id, status: "RUNNING", desc: "", ...listed }]]),
      fetchedAt: 1,
      complete: true,
    });

  it("reads the pods again on the next poll after a read that left them out, and answers from the task list only once they were read whole", async () => {
    let podsAnswered = false;
    let podLists = 0;
    const { svc, reads } = fakeService({
      listPods: async () => {
        podLists++;
        if (!podsAnswered) throw missing("listPods");
        return [{ podName: "p0" }];
      },
      taskListSnapshot: listing("task-1"),
    });
    const client = trainingJobClient(svc);
    await client.observe(call(shown()), "task-1");
    expect(podLists).toBe(1);
    // The listed poll reads the pods again (with the storages), not the task.
    reads.length = 0;
    const again = await client.observeFromList?.(call(shown()), "task-1", 1_000);
    expect(podLists).toBe(2);
    expect(reads).toEqual(["storages"]);
    expect(again?.observation.remote.observation.note).toMatch(/listPods/);
    podsAnswered = true;
    await client.observeFromList?.(call(shown()), "task-1", 1_000);
    expect(podLists).toBe(3);
    // Read whole now: the next listed poll reads nothing of its own.
    reads.length = 0;
    const quiet = await client.observeFromList?.(call(shown()), "task-1", 1_000);
    expect(podLists).toBe(3);
    expect(reads).toEqual([]);
    expect(quiet?.observation.remote.observation.fromList).toBe(true);
  });

  it("reads only the storages and pods, not the task, when a job due a full read is listed as its status shows", async () => {
    const { svc, reads } = fakeService({ taskListSnapshot: listing("task-1") });
    const client = trainingJobClient(svc);
    // Never read by this client: due (the follow-up of a first look, or after a start).
    const listed = await client.observeFromList?.(call(shown()), "task-1", 1_000);
    expect(reads).toEqual(["storages", "pods"]);
    expect(listed?.fetchedAt).toBe(1);
    expect(listed?.observation.remote.status.pods?.map((p) => p.name)).toEqual(["p0"]);
    expect(listed?.observation.remote.observation.fromList).toBeFalsy();
    // A task listed otherwise than the status shows is read in detail (undefined here).
    const changed = { ...shown(), status: { ...shown().status, remoteStatus: "PENDING" } };
    expect(await trainingJobClient(svc).observeFromList?.(call(changed), "task-1", 1_000)).toBe(
      undefined,
    );
  });

  it("reads in detail a task listed without env, and answers from the list once the service fills the env in", async () => {
    const env = { AIDC_OWNER: "ns/j", AIDC_CLIENT_TOKEN: "t" };
    let listed: object = {};
    const { svc, reads } = fakeService({
      getTrainingTask: async (id: string) => {
        reads.push("task");
        return { id, status: "RUNNING", desc: "", env };
      },
      listPods: async () => [{ podName: "p0" }],
      taskListSnapshot: () => listing("task-1", listed)(),
    });
    const client = trainingJobClient(svc);
    // Listed without env, none kept from a detail read: the poll reads in detail.
    expect(await client.observeFromList?.(call(shown()), "task-1", 1_000)).toBeUndefined();
    const read = await client.observe(call(shown()), "task-1");
    if (!read.exists) throw new Error("not observed");
    const settled = { ...shown(), status: { ...shown().status, ...read.remote.status } };
    // The service lists it with the env of that detail read from then on.
    listed = { env };
    reads.length = 0;
    const answered = await client.observeFromList?.(call(settled), "task-1", 1_000);
    expect(reads).toEqual([]);
    expect(answered?.observation.remote.observation.fromList).toBe(true);
    expect(answered?.observation.remote.observation.task.env).toEqual(env);
  });

  it("leaves out a pod part the service has no operation for, instead of its previous value", async () => {
    const { svc } = fakeService({
      listPods: async () => [{ podName: "p" }],
      listPodOpenPorts: async () => {
        throw missing("listPodOpenPorts");
      },
    });
    // The previous status shows pod p with a custom port 80.
    const o = await trainingJobClient(svc).observe(call(job(false)), "task-1");
    if (!o.exists) throw new Error("not observed");
    const [pod] = o.remote.status.pods ?? [];
    expect(pod?.name).toBe("p");
    expect(pod?.containers).toEqual([]);
    expect(pod?.ports).toBeUndefined();
    expect(o.remote.observation.note).toMatch(/service\.endpoints\.listPodOpenPorts/);
  });

  it("refuses ports it cannot open when the service does not answer open-port, without failing", async () => {
    const { svc, calls } = fakeService({
      listPods: async () => [{ podName: "p0" }],
      openPodPort: async () => {
        calls.push("open");
        throw missing("openPodPort");
      },
    });
    const client = trainingJobClient(svc);
    const j = {
      ...job(false),
      spec: { ...job(false).spec, ports: [{ port: 8888, protocol: "http" as const }] },
    };
    const o = await client.observe(call(j), "task-1");
    if (!o.exists) throw new Error("not observed");
    const r = await client.update(call(j), "task-1", o.remote);
    expect(r).toMatchObject({ outcome: "Refused", reason: "OpenPortRefused" });
    expect(r.outcome === "Refused" && r.message).toContain("service.endpoints.openPodPort");
    expect(calls).toEqual(["open"]);
  });

  it("reads the task alone on its first look, leaving storages and pods (from any earlier task) out until a follow-up", async () => {
    let lists = 0;
    const { svc, reads } = fakeService({
      taskListSnapshot: async () => {
        lists++;
        return undefined;
      },
    });
    const client = trainingJobClient(svc);
    // The status shows pods, but of another task: a new task's first look.
    const first = await client.observe(call(job(false)), "task-2");
    if (!first.exists) throw new Error("not observed");
    expect(reads).toEqual(["task"]);
    expect(first.ready).toMatchObject({ status: "True", reason: "TaskRunning" });
    expect(first.upToDate).toBe(true);
    expect(first.partial).toBe(true);
    expect(first.remote.status.pods).toBeUndefined();
    expect(first.remote.status.storages).toBeUndefined();
    expect(first.remote.observation.partsDeferred).toBe(true);
    // The follow-up (the status shows the task now) reads the storages and pods of the
    // task the first look read: neither the task again nor the list.
    const shown = { ...job(false), status: { ...job(false).status, taskId: "task-2" } };
    reads.length = 0;
    const next = await client.observeFromList?.(call(shown), "task-2", 1_000);
    expect(reads).toEqual(["storages", "pods"]);
    expect(lists).toBe(0);
    expect(next?.observation.partial).toBeFalsy();
    expect(next?.observation.remote.status.pods?.map((p) => p.name)).toEqual(["p0"]);
    // Once: the next poll is answered from the list (none here: a detail read follows).
    reads.length = 0;
    expect(await client.observeFromList?.(call(shown), "task-2", 1_000)).toBeUndefined();
    expect(lists).toBe(1);
    const again = await client.observe(call(shown), "task-2");
    expect(reads).toEqual(["task", "storages", "pods"]);
    expect(again.exists && again.partial).toBeFalsy();
  });

  it("reads the pods on the first look when spec.ports or exposePorts needs them now", async () => {
    for (const spec of [{ ports: [] }, { exposePorts: true }]) {
      const { svc, reads } = fakeService();
      const j = { ...job(false), spec: { ...job(false).spec, ...spec } };
      const o = await trainingJobClient(svc, { exposure: true }).observe(call(j), "task-2");
      expect(reads, JSON.stringify(spec)).toEqual(["task", "storages", "pods"]);
      expect(o.exists && o.partial).toBeFalsy();
    }
  });

  it("maps a missing task to exists: false", async () => {
    const { svc } = fakeService({
      getTrainingTask: async () => {
        throw new ServiceNotFoundError("gone", { endpoint: "getTrainingTask", code: 404 });
      },
    });
    expect(await trainingJobClient(svc).observe(call(job(false)), "t")).toEqual({
      exists: false,
    });
  });
});
