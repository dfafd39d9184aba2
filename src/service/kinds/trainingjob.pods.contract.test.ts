/**
 * Contract: the pods of a training task and their ports (kinds/trainingjob.pods.ts),
 * client against the emulator: the happy path and the service's refusals of each.
 */
import { describe, expect, it } from "vitest";
import { emulatorPerFile, failure } from "../../../test/support/service-contract.js";
import { runningNas, runningTask, TRAINING_DELETES } from "../../../test/support/training-tasks.js";
import type { EmulatedService } from "../../emulator/harness.js";
import type { ServiceClient } from "../client.js";
import { ServiceNotFoundError, ServiceRefusedError } from "../errors.js";

let svc: EmulatedService;
let client: ServiceClient;
const DELAY = 1000;

emulatorPerFile({ manualTime: true, emulator: { subscriptionDelayMs: DELAY } }, (started) => {
  svc = started;
  client = svc.newClient({ endpoints: TRAINING_DELETES });
});

describe("pods and ports", () => {
  it("lists one pod per worker with containers and the task's volumes", async () => {
    const nasId = await runningNas(svc);
    const id = await runningTask(svc, client, 2, nasId);
    const pods = await client.listPods(id);
    expect(pods.map((p) => p.podName)).toEqual([`${id}-worker-0`, `${id}-worker-1`]);
    const res = await client.getPodResource(id, pods[0]?.podName as string);
    expect(res.containers[0]).toMatchObject({
      status: "running",
      restartCount: 0,
      targetPort: [22],
    });
    expect(res.volumes).toEqual([
      { nasName: "data", nasType: "NAS", mountPath: "/data", readOnly: true, path: "/ds" },
    ]);
  });

  it("opens, lists and closes a custom port; the system port has no protocol", async () => {
    const id = await runningTask(svc, client, 1);
    const pod = `${id}-worker-0`;
    const opened = await client.openPodPort(id, pod, { port: 8888, protocol: "https" });
    expect(opened).toMatchObject({
      port: 8888,
      protocol: "https",
      externalHost: expect.any(String),
      externalPort: expect.any(Number),
    });
    const ports = await client.listPodOpenPorts(id, pod);
    expect(ports.ports).toEqual([expect.objectContaining({ port: 22 })]);
    expect(ports.ports[0]?.protocol).toBeUndefined();
    expect(ports.customPorts).toEqual([opened]);
    await client.closePodPort(id, pod, 8888);
    expect((await client.listPodOpenPorts(id, pod)).customPorts).toEqual([]);
  });

  it.each([
    ["a port that is not open", 9999, /port 9999 is not open/],
    ["a system port", 22, /system port/],
  ])("refuses to close %s", async (_reason, port, message) => {
    const id = await runningTask(svc, client, 1);
    const err = await failure(client.closePodPort(id, `${id}-worker-0`, port));
    expect(err).toBeInstanceOf(ServiceRefusedError);
    expect((err as Error).message).toMatch(message);
  });

  it("refuses to open a port twice", async () => {
    const id = await runningTask(svc, client, 1);
    await client.openPodPort(id, `${id}-worker-0`, { port: 8080, protocol: "http" });
    const err = await failure(
      client.openPodPort(id, `${id}-worker-0`, { port: 8080, protocol: "http" }),
    );
    expect(err).toMatchObject({ code: 409, retryable: false });
  });

  it.each([
    ["getPodResource", (c: ServiceClient, id: string) => c.getPodResource(id, "ghost")],
    ["listPodOpenPorts", (c: ServiceClient, id: string) => c.listPodOpenPorts(id, "ghost")],
  ])("%s of an unknown pod is not-found", async (_name, call) => {
    const id = await runningTask(svc, client, 1);
    expect(await failure(call(client, id))).toBeInstanceOf(ServiceNotFoundError);
  });
});
