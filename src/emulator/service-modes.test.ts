/**
 * The emulator's modes for services that differ from the default one: creates that act
 * and then fail, faults that leave endpoints out, a 500 for unknown ids, a capped page
 * size, a refused repeat of a delete under way, unique template names and a base URL
 * with a path prefix. Each is off by default.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { failure } from "../../test/support/service-contract.js";
import {
  ServiceNotFoundError,
  ServiceRefusedError,
  ServiceUnavailableError,
} from "../service/errors.js";
import { EmulatorAdmin } from "./admin-client.js";
import { type EmulatedService, startEmulatedService } from "./harness.js";

const nasOrder = {
  productCode: "nas.capacity.standard",
  storageParams: { name: "acting", description: "d" },
};

describe("acting faults and faults that leave endpoints out", () => {
  let svc: EmulatedService;
  beforeAll(async () => {
    svc = await startEmulatedService({ emulator: { subscriptionDelayMs: 0 } });
  });
  afterAll(() => svc.stop());
  beforeEach(() => {
    svc.emulator.state.reset();
    svc.emulator.faults.clear();
    svc.emulator.requestLog.clear();
  });

  it("creates the NAS and then answers HTTP 500 with the error envelope", async () => {
    svc.emulator.faults.set([
      { kind: "error", endpoint: "subscribeNas", acting: true, httpStatus: 500, times: 1 },
    ]);
    const err = await failure(svc.client.subscribeNas(nasOrder));
    expect(err).toBeInstanceOf(ServiceUnavailableError);
    expect((err as ServiceUnavailableError).outcomeUnknown).toBe(true);
    expect([...svc.emulator.state.nas.values()].map((n) => n.name)).toEqual(["acting"]);
    const [entry] = svc.emulator.requestLog.read({ endpoint: "subscribeNas" });
    expect(entry).toMatchObject({ httpStatus: 500, status: 500, fault: "error", acted: true });
  });

  it("creates the task and then drops the connection", async () => {
    svc.emulator.faults.set([{ kind: "drop", endpoint: "createTrainingTask", acting: true }]);
    const err = await failure(
      svc.client.createTrainingTask({
        name: "dropped",
        createType: "DIRECT",
        productCode: "train.cpu.16",
        workerCount: 1,
        image: "i",
      }),
    );
    expect((err as ServiceUnavailableError).outcomeUnknown).toBe(true);
    expect([...svc.emulator.state.tasks.values()].map((t) => t.name)).toEqual(["dropped"]);
  });

  it("creates nothing on a fault that does not act", async () => {
    svc.emulator.faults.set([{ kind: "error", endpoint: "subscribeNas" }]);
    await failure(svc.client.subscribeNas(nasOrder));
    expect(svc.emulator.state.nas.size).toBe(0);
  });

  it("leaves the endpoints in exceptEndpoints alone", async () => {
    svc.emulator.faults.set([{ kind: "error", exceptEndpoints: ["subscribeNas"] }]);
    await svc.client.subscribeNas(nasOrder);
    expect(await failure(svc.client.listNas())).toBeInstanceOf(ServiceUnavailableError);
  });
});

describe("a service that answers 500 for unknown ids and caps its pages", () => {
  let svc: EmulatedService;
  beforeAll(async () => {
    svc = await startEmulatedService({
      emulator: { subscriptionDelayMs: 0, unknownIdStatus: 500, pageSizeCap: 20 },
    });
  });
  afterAll(() => svc.stop());

  it("answers a 500 envelope for an unknown NAS and a 404 with the default", async () => {
    expect(await failure(svc.client.getNas("nas-404"))).toBeInstanceOf(ServiceUnavailableError);
    await new EmulatorAdmin(svc.emulator.url).configure({ unknownIdStatus: 404 });
    expect(await failure(svc.client.getNas("nas-404"))).toBeInstanceOf(ServiceNotFoundError);
    await new EmulatorAdmin(svc.emulator.url).configure({ unknownIdStatus: 500 });
  });

  it("answers at most 20 records a page, says so, and the walk still sees every record", async () => {
    for (let i = 0; i < 45; i++) {
      await svc.client.subscribeNas({ productCode: "nas.capacity.standard", storageParams: {} });
    }
    const page = await svc.client.listNas({ pageNo: 2, pageSize: 50 });
    expect(page).toMatchObject({ pageNo: 2, pageSize: 20, totalRows: 45 });
    expect(page.records).toHaveLength(20);
    const ids: string[] = [];
    for await (const n of svc.client.iterateNas()) ids.push(n.id);
    expect(new Set(ids).size).toBe(45);
  });

  it("answers later pages of a list that shrinks after its first page with the shifted offset and total", async () => {
    const admin = new EmulatorAdmin(svc.emulator.url);
    const all = [...svc.emulator.state.nas.keys()];
    await admin.configure({ listShrinksAfterFirstPage: 2 });
    const first = await svc.client.listNas({ pageNo: 1, pageSize: 20 });
    expect(first).toMatchObject({ totalRows: 45 });
    expect(first.records.map((n) => n.id)).toEqual(all.slice(0, 20));
    const second = await svc.client.listNas({ pageNo: 2, pageSize: 20 });
    expect(second).toMatchObject({ pageNo: 2, totalRows: 43 });
    expect(second.records.map((n) => n.id)).toEqual(all.slice(22, 42));
    await admin.configure({ listShrinksAfterFirstPage: 0 });
  });

  it("answers later pages of a list that grows after its first page with the new total, pushed down newest first", async () => {
    const admin = new EmulatorAdmin(svc.emulator.url);
    const all = [...svc.emulator.state.nas.keys()];
    await admin.configure({ listGrowsAfterFirstPage: 3 });
    const page = (pageNo: number) => svc.client.listNas({ pageNo, pageSize: 20 });
    expect(await page(1)).toMatchObject({ totalRows: 45 });
    const second = await page(2);
    expect(second).toMatchObject({ pageNo: 2, totalRows: 48 });
    expect(second.records.map((n) => n.id)).toEqual(all.slice(20, 40));
    await admin.configure({ listOrder: "newestFirst" });
    const newest = [...all].reverse();
    expect((await page(1)).records.map((n) => n.id)).toEqual(newest.slice(0, 20));
    // Three records made before the list push every other three places down: page 2 repeats three.
    expect((await page(2)).records.map((n) => n.id)).toEqual(newest.slice(17, 37));
    expect((await page(3)).records.map((n) => n.id)).toEqual(newest.slice(37));
    await admin.configure({ listGrowsAfterFirstPage: 0, listOrder: "oldestFirst" });
  });
});

describe("a service refusing the repeat of a delete under way", () => {
  let svc: EmulatedService;
  beforeAll(async () => {
    svc = await startEmulatedService({
      emulator: { subscriptionDelayMs: 0, nasReleaseDelayMs: 60_000, repeatDeleteStatus: 409 },
      client: { endpoints: { deleteNas: "DELETE /v1/nasStorage/instance/{id}" } },
    });
  });
  afterAll(() => svc.stop());

  it("answers a second delete of a releasing NAS with 409, and accepts it with the default", async () => {
    await svc.client.subscribeNas(nasOrder);
    const [id = ""] = svc.emulator.state.nas.keys();
    await svc.client.deleteNas(id);
    expect(svc.emulator.state.nas.get(id)?.status).toBe("Releasing");
    const err = await failure(svc.client.deleteNas(id));
    expect(err).toBeInstanceOf(ServiceRefusedError);
    expect(err).toMatchObject({
      code: 409,
      message: expect.stringMatching(/already being released/),
    });
    await new EmulatorAdmin(svc.emulator.url).configure({ repeatDeleteStatus: 0 });
    await svc.client.deleteNas(id);
    expect(svc.emulator.state.nas.get(id)?.status).toBe("Releasing");
  });
});

describe("a service of unique template names", () => {
  let svc: EmulatedService;
  beforeAll(async () => {
    svc = await startEmulatedService({ emulator: { templateNameTakenStatus: 409 } });
  });
  afterAll(() => svc.stop());

  it("refuses a template create whose name a template has with 409, and takes it with the default", async () => {
    await svc.client.createTemplate({ name: "bert", image: "i" });
    const err = await failure(svc.client.createTemplate({ name: "bert", image: "j" }));
    expect(err).toBeInstanceOf(ServiceRefusedError);
    expect(err).toMatchObject({ code: 409, message: expect.stringMatching(/bert already exists/) });
    expect(svc.emulator.state.templates.size).toBe(1);
    await new EmulatorAdmin(svc.emulator.url).configure({ templateNameTakenStatus: 0 });
    await svc.client.createTemplate({ name: "bert", image: "j" });
    expect(svc.emulator.state.templates.size).toBe(2);
  });
});

describe("a service under a base URL with a path prefix", () => {
  let svc: EmulatedService;
  beforeAll(async () => {
    svc = await startEmulatedService({ emulator: { basePath: "/api/gw/" } });
  });
  afterAll(() => svc.stop());

  it("serves the API and the admin API under the prefix, and nothing outside it", async () => {
    expect(svc.emulator.url).toMatch(/\/api\/gw$/);
    expect(await svc.client.listNasProducts()).not.toHaveLength(0);
    const [entry] = svc.emulator.requestLog.read({ endpoint: "listNasProducts" });
    expect(entry?.path.startsWith("/api/gw/v1/")).toBe(true);
    await new EmulatorAdmin(svc.emulator.url).health();
    const root = svc.emulator.url.replace(/\/api\/gw$/, "");
    const outside = await fetch(`${root}/v1/product/list-for-nas-storage`, {
      headers: { Authorization: `Bearer ${svc.apiKey}` },
    });
    expect(outside.status).toBe(404);
    expect(await outside.text()).toMatch(/^404 page not found/);
  });
});
