/**
 * Contract: every operation of the endpoint table, called through the client against
 * the emulator, answers the two errors the spec lists for every operation (403 with a
 * wrong key, the 500 envelope) with the right typed error, on HTTP 200 and on a
 * mirrored HTTP status alike.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { failure } from "../../test/support/service-contract.js";
import { type EmulatedService, startEmulatedService } from "../emulator/harness.js";
import type { ServiceClient } from "./client.js";
import { DEFAULT_ENDPOINTS, ENDPOINT_NAMES, type EndpointName } from "./endpoints.js";
import { EndpointDisabledError, ServiceAuthError, ServiceUnavailableError } from "./errors.js";
import { BlockVolumeService } from "./kinds/blockvolume.js";
import { FileSystemOperations } from "./kinds/filesystem.js";
import type { KIND_ENDPOINT_TABLES } from "./kinds/index.js";

const fileSystems = (c: ServiceClient) => new FileSystemOperations(c);
const volumes = (c: ServiceClient) => new BlockVolumeService(c);

type Call = (c: ServiceClient) => Promise<unknown>;

/** The operations `ServiceClient` has a method of its own for. */
type ClientOperation = keyof (typeof KIND_ENDPOINT_TABLES)[
  | "cciinstance"
  | "nasvolume"
  | "trainingjob"
  | "trainingtemplate"];

/**
 * One valid call per endpoint; the record type makes a forgotten operation of the
 * client's own methods a compile error. A kind's own endpoint (src/service/kinds) without a call here
 * is called with {@link genericCall}: the errors under test come before its body is read.
 */
const CALLS: Record<ClientOperation, Call> & Partial<Record<EndpointName, Call>> = {
  createTrainingTask: (c) =>
    c.createTrainingTask({
      name: "t",
      createType: "DIRECT",
      productCode: "train.cpu.16",
      workerCount: 1,
      image: "i",
    }),
  getTrainingTask: (c) => c.getTrainingTask("task-1"),
  updateTrainingTaskDesc: (c) => c.updateTrainingTaskDesc("task-1", "d"),
  saveTrainingTaskAsTemplate: (c) =>
    c.saveTrainingTaskAsTemplate("task-1", { name: "n", desc: "d" }),
  listTrainingTaskStorages: (c) => c.listTrainingTaskStorages("task-1"),
  getPodResource: (c) => c.getPodResource("task-1", "p"),
  listPodOpenPorts: (c) => c.listPodOpenPorts("task-1", "p"),
  closePodPort: (c) => c.closePodPort("task-1", "p", 8080),
  getTrainingSubscriptionResult: (c) => c.getTrainingSubscriptionResult("k"),
  listTrainingTasks: (c) => c.listTrainingTasks(),
  listPods: (c) => c.listPods("task-1"),
  openPodPort: (c) => c.openPodPort("task-1", "p", { port: 8080, protocol: "http" }),
  deleteTrainingTask: (c) => c.deleteTrainingTask("task-1"),
  createTemplate: (c) => c.createTemplate({ name: "n" }),
  updateTemplate: (c) => c.updateTemplate("tpl-1", { name: "n" }),
  listTemplates: (c) => c.listTemplates(),
  deleteTemplate: (c) => c.deleteTemplate("tpl-1"),
  listTrainingProducts: (c) => c.listTrainingProducts(),
  listNasProducts: (c) => c.listNasProducts(1),
  isNasProductAvailable: (c) => c.isNasProductAvailable({ aidcId: 1, resourceSpecCode: "x" }),
  subscribeNas: (c) => c.subscribeNas({ productCode: "nas.fixed.200" }),
  scaleNas: (c) => c.scaleNas("nas-1", { scaleType: "ScaleUp", capacity: 1 }),
  updateNasMountPath: (c) => c.updateNasMountPath("nas-1", "/data"),
  getNasSubscriptionResult: (c) => c.getNasSubscriptionResult("k"),
  listNas: (c) => c.listNas(),
  getNas: (c) => c.getNas("nas-1"),
  deleteNas: (c) => c.deleteNas("nas-1"),
  listCci: (c) => c.listCci(),
  getCci: (c) => c.getCci("cci-0001"),
  getCciErrorDetails: (c) => c.getCciErrorDetails("cci-0001"),
  saveCciImage: (c) => c.saveCciImage("cci-0001", { imageName: "i", tag: "t" }),
  createVolume: (c) => volumes(c).createVolume({ name: "v", sizeGB: 10, volumeType: "ssd" }),
  attachVolume: (c) => volumes(c).attachVolume("vol-1", "cci-0001"),
  detachVolume: (c) => volumes(c).detachVolume("vol-1"),
  deleteVolume: (c) => volumes(c).deleteVolume("vol-1"),
  getVolume: (c) => volumes(c).getVolume("vol-1"),
  listVolumes: (c) => volumes(c).listVolumes(),
  createFileSystem: (c) => fileSystems(c).create({ name: "fs", sizeGB: 10 }),
  createFileSystemMount: (c) => fileSystems(c).mount("fs-1", { instanceId: "cci-0001" }),
  getFileSystem: (c) => fileSystems(c).get("fs-1"),
  listFileSystems: (c) => fileSystems(c).list(),
  deleteFileSystem: (c) => fileSystems(c).delete("fs-1"),
  deleteFileSystemMount: (c) => fileSystems(c).unmount("fs-1", "mnt-1"),
};

/** Every endpoint enabled at its default path (deletes are off by default). */
const ALL_ENABLED = Object.fromEntries(
  ENDPOINT_NAMES.map((n) => [n, `${DEFAULT_ENDPOINTS[n].method} ${DEFAULT_ENDPOINTS[n].path}`]),
);

let svc: EmulatedService;
let client: ServiceClient;
let wrongKey: ServiceClient;

/** A call of `name` through the client's `request`, every path parameter an id, body `{}`. */
function genericCall(name: EndpointName): Call {
  const { method, path } = DEFAULT_ENDPOINTS[name];
  const params = Object.fromEntries([...path.matchAll(/\{(\w+)\}/g)].map((m) => [m[1], "id-1"]));
  return (c) => c.request(name, { params, ...(method === "GET" ? {} : { body: {} }) }, z.unknown());
}

const callOf = (name: EndpointName): Call => CALLS[name] ?? genericCall(name);

beforeAll(async () => {
  svc = await startEmulatedService();
  client = svc.newClient({
    endpoints: ALL_ENABLED,
    retry: { maxAttempts: 1, baseDelayMs: 1, maxDelayMs: 1 },
  });
  wrongKey = svc.newClient({ endpoints: ALL_ENABLED, apiKey: () => "not-the-key-0123456789" });
});
afterAll(() => svc.stop());
beforeEach(() => {
  svc.emulator.faults.clear();
  svc.emulator.state.behaviour.httpStatusMirrorsEnvelope = false;
});

describe.each(ENDPOINT_NAMES)("%s", (name) => {
  it("answers a wrong API key with a terminal auth error", async () => {
    const err = await failure(callOf(name)(wrongKey));
    expect(err).toBeInstanceOf(ServiceAuthError);
    expect(err).toMatchObject({ code: 403, retryable: false, endpoint: name });
  });

  it("answers the 500 envelope with a retryable error", async () => {
    svc.emulator.faults.set([{ kind: "error", endpoint: name }]);
    const err = await failure(callOf(name)(client));
    expect(err).toBeInstanceOf(ServiceUnavailableError);
    expect(err).toMatchObject({ code: 500, retryable: true, endpoint: name });
  });

  it("reads the same errors when the HTTP status mirrors the envelope", async () => {
    svc.emulator.state.behaviour.httpStatusMirrorsEnvelope = true;
    expect(await failure(callOf(name)(wrongKey))).toBeInstanceOf(ServiceAuthError);
    svc.emulator.faults.set([{ kind: "error", endpoint: name }]);
    expect(await failure(callOf(name)(client))).toBeInstanceOf(ServiceUnavailableError);
  });
});

describe("a disabled endpoint", () => {
  it("throws EndpointDisabledError without sending anything", async () => {
    const before = svc.emulator.requestLog.lastSeq();
    const err = await failure(svc.client.deleteNas("nas-1"));
    expect(err).toBeInstanceOf(EndpointDisabledError);
    expect(err).toMatchObject({ retryable: false, endpoint: "deleteNas" });
    expect(svc.client.isEndpointEnabled("deleteNas")).toBe(false);
    expect(svc.emulator.requestLog.lastSeq()).toBe(before);
  });

  it("stays off when the configuration disables a default one", async () => {
    const c = svc.newClient({ endpoints: { listPods: null } });
    expect(c.isEndpointEnabled("listPods")).toBe(false);
    expect(await failure(c.listPods("task-1"))).toBeInstanceOf(EndpointDisabledError);
  });
});
