/**
 * Contract: the NAS products and NAS storage operations (kinds/nasvolume.ts), client
 * against the emulator: the happy path and the service's refusals.
 */
import { describe, expect, it } from "vitest";
import { emulatorPerFile, failure } from "../../../test/support/service-contract.js";
import type { EmulatedService } from "../../emulator/harness.js";
import type { ServiceClient } from "../client.js";
import { DEFAULT_ENDPOINTS } from "../endpoints.js";
import {
  ServiceInvalidRequestError,
  ServiceMalformedResponseError,
  ServiceNotFoundError,
  ServiceRefusedError,
} from "../errors.js";
import { withClientTokenMarker } from "../schemas/create.js";

let svc: EmulatedService;
let client: ServiceClient;
const DELAY = 500;

emulatorPerFile({ manualTime: true, emulator: { subscriptionDelayMs: DELAY } }, (started) => {
  svc = started;
  client = svc.newClient({ endpoints: { deleteNas: DEFAULT_ENDPOINTS.deleteNas.path } });
});

async function subscribedNas(capacity = 200, token = "tok-1"): Promise<string> {
  const key = await client.subscribeNas({
    productCode: "nas.capacity.standard",
    storageParams: {
      name: "data",
      description: withClientTokenMarker("team data", token),
      storageCapacity: capacity,
    },
  });
  svc.clock?.advance(DELAY);
  return (await client.getNasSubscriptionResult(key)).instanceId as string;
}

describe("product catalogs", () => {
  it("lists training specifications with their remaining count, per compute center", async () => {
    const all = await client.listTrainingProducts();
    expect(all.length).toBeGreaterThanOrEqual(3);
    expect(all[0]).toMatchObject({
      productCode: expect.any(String),
      remainingCount: expect.any(Number),
    });
    const west = await client.listTrainingProducts(2);
    expect(west.every((p) => p.aidcId === 2)).toBe(true);
  });

  it("lists NAS products with and without capacity bounds", async () => {
    const products = await client.listNasProducts();
    expect(
      products.some((p) => p.paramValueMin !== undefined && p.paramValueMax !== undefined),
    ).toBe(true);
    expect(
      products.some((p) => p.paramValueMin === undefined && p.paramValueMax === undefined),
    ).toBe(true);
    expect(products[0]).not.toHaveProperty("available");
  });

  it("says whether a NAS product can be provisioned, by center id or code", async () => {
    expect(
      await client.isNasProductAvailable({ aidcId: 1, resourceSpecCode: "nas.capacity.standard" }),
    ).toBe(true);
    expect(
      await client.isNasProductAvailable({
        aidcCode: "aidc-west-1",
        resourceSpecCode: "nas.capacity.west",
      }),
    ).toBe(false);
    expect(
      await client.isNasProductAvailable({ aidcId: 2, resourceSpecCode: "nas.capacity.standard" }),
    ).toBe(false);
  });

  it("refuses an availability check without a compute center before sending it", async () => {
    const err = await failure(client.isNasProductAvailable({ resourceSpecCode: "x" }));
    expect(err).toBeInstanceOf(ServiceInvalidRequestError);
  });
});

describe("NAS subscription", () => {
  it("goes Creating then Running, and the result names the instance", async () => {
    const key = await client.subscribeNas({
      productCode: "nas.fixed.200",
      storageParams: { name: "fixed" },
    });
    expect((await client.getNasSubscriptionResult(key)).state).toBe("Pending");
    const listed = (await client.listNas({ name: "fixed" })).records;
    expect(listed).toEqual([expect.objectContaining({ status: "Creating", quota: "200" })]);
    svc.clock?.advance(DELAY);
    const result = await client.getNasSubscriptionResult(key);
    expect(result).toMatchObject({ state: "Succeeded", instanceId: listed[0]?.id });
    expect((await client.getNas(result.instanceId as string)).status).toBe("Running");
  });

  it("sends storageCapacity as a string", async () => {
    await subscribedNas(300);
    const [entry] = svc.emulator.requestLog.read({ endpoint: "subscribeNas" });
    expect(entry?.body).toMatchObject({ storageParams: { storageCapacity: "300" } });
  });

  it.each([
    ["below the product's minimum", "nas.capacity.standard", 50, /below the minimum of 100 GB/],
    [
      "above the product's maximum",
      "nas.capacity.standard",
      20_000,
      /above the maximum of 10240 GB/,
    ],
    [
      "other than the default of a product without bounds",
      "nas.fixed.200",
      300,
      /only its default of 200 GB/,
    ],
  ])("is refused for a capacity %s", async (_reason, productCode, capacity, message) => {
    const err = await failure(
      client.subscribeNas({ productCode, storageParams: { storageCapacity: capacity } }),
    );
    expect(err).toBeInstanceOf(ServiceRefusedError);
    expect((err as Error).message).toMatch(message);
  });

  it("fails asynchronously for a product that cannot be provisioned", async () => {
    const key = await client.subscribeNas({
      productCode: "nas.capacity.west",
      storageParams: { storageCapacity: 100 },
    });
    svc.clock?.advance(DELAY);
    expect(await client.getNasSubscriptionResult(key)).toMatchObject({
      state: "Failed",
      message: expect.stringMatching(/cannot be provisioned/),
    });
  });

  it("finds the NAS again by the client token in its description", async () => {
    const id = await subscribedNas(200, "tok-a");
    await subscribedNas(200, "tok-b");
    expect(await client.findNasIdsByClientToken("tok-a")).toEqual([id]);
    expect(await client.findNasIdsByClientToken("tok-zzz")).toEqual([]);
  });

  it("proves a token absent only from a complete walk of the whole list", async () => {
    await subscribedNas(200, "tok-c");
    expect(await client.provesNasTokenAbsent("tok-c")).toBe(false);
    expect(await client.provesNasTokenAbsent("tok-never-sent")).toBe(true);
    svc.emulator.state.behaviour.listsOmitDescription = true;
    try {
      expect(await client.provesNasTokenAbsent("tok-never-sent")).toBe(false);
    } finally {
      svc.emulator.state.behaviour.listsOmitDescription = false;
    }
  });
});

describe("NAS scale, mount path, list, detail and delete", () => {
  it("scales by the change, not to the total", async () => {
    const id = await subscribedNas(200);
    await client.scaleNas(id, { scaleType: "ScaleUp", capacity: 100 });
    expect((await client.getNas(id)).quota).toBe("300");
    await client.scaleNas(id, { scaleType: "ScaleDown", capacity: 50 });
    expect((await client.getNas(id)).quota).toBe("250");
    expect(svc.emulator.requestLog.read({ endpoint: "scaleNas" })[0]?.body).toEqual({
      id,
      scaleType: "ScaleUp",
      capacity: 100,
    });
  });

  it("refuses to shrink below the used amount", async () => {
    const id = await subscribedNas(500);
    await svc.admin.setNasState(id, { usedGB: 450 });
    const err = await failure(client.scaleNas(id, { scaleType: "ScaleDown", capacity: 100 }));
    expect((err as Error).message).toMatch(/450 GB are used/);
    expect((await client.getNas(id)).used).toBe("450");
  });

  it("refuses to grow beyond the product's maximum", async () => {
    const id = await subscribedNas(10_000);
    expect(
      await failure(client.scaleNas(id, { scaleType: "ScaleUp", capacity: 1000 })),
    ).toBeInstanceOf(ServiceRefusedError);
  });

  it("refuses to scale a NAS that is still Creating", async () => {
    const key = await client.subscribeNas({ productCode: "nas.fixed.200" });
    const id = (await client.listNas()).records[0]?.id as string;
    const err = await failure(client.scaleNas(id, { scaleType: "ScaleUp", capacity: 1 }));
    expect((err as Error).message).toMatch(/Creating/);
    expect(key).toBeTruthy();
  });

  it("changes the mount path, which the spec's pattern limits", async () => {
    const id = await subscribedNas();
    await client.updateNasMountPath(id, "/mnt/new_path");
    expect((await client.getNas(id)).mountPath).toBe("/mnt/new_path");
    expect(await failure(client.updateNasMountPath(id, "/mnt/with-dash"))).toBeInstanceOf(
      ServiceInvalidRequestError,
    );
  });

  it("pages through the NAS list", async () => {
    await svc.admin.seed({ nas: Array.from({ length: 12 }, (_, i) => ({ name: `vol${i}` })) });
    const ids: string[] = [];
    for await (const n of client.iterateNas({ pageSize: 5 })) ids.push(n.id);
    expect(new Set(ids).size).toBe(12);
  });

  it("answers the NAS ids of failed reads asked for at once from one walk, and walks anew for a later one", async () => {
    const clock = svc.clock;
    if (!clock) throw new Error("manual time expected");
    const timed = svc.newClient({ now: clock.now });
    const walks = () => svc.emulator.requestLog.read({ endpoint: "listNas" }).length;
    await svc.admin.seed({ nas: Array.from({ length: 3 }, (_, i) => ({ name: `vol${i}` })) });
    const [a, b, c] = await Promise.all([
      timed.listNasIds(),
      timed.listNasIds(),
      timed.listNasIds(),
    ]);
    expect(a?.ids.size).toBe(3);
    expect(a?.complete).toBe(true);
    expect([b, c]).toEqual([a, a]);
    expect(walks()).toBe(1);
    // Asked at the time that walk started: it is recent enough.
    await timed.listNasIds();
    expect(walks()).toBe(1);
    // A read that failed after the walk started needs a walk that started after it.
    clock.advance(1);
    await timed.listNasIds();
    expect(walks()).toBe(2);
  });

  it("deletes a NAS when the delete operation is configured; then it is not found", async () => {
    const id = await subscribedNas();
    await client.deleteNas(id);
    expect(await failure(client.getNas(id))).toBeInstanceOf(ServiceNotFoundError);
  });

  it.each([
    ["getNas", (c: ServiceClient) => c.getNas("nas-404")],
    [
      "scaleNas",
      (c: ServiceClient) => c.scaleNas("nas-404", { scaleType: "ScaleUp", capacity: 1 }),
    ],
    ["updateNasMountPath", (c: ServiceClient) => c.updateNasMountPath("nas-404", "/data")],
    ["deleteNas", (c: ServiceClient) => c.deleteNas("nas-404")],
    ["getNasSubscriptionResult", (c: ServiceClient) => c.getNasSubscriptionResult("sub-404")],
  ])("%s of an unknown id is not-found", async (_name, call) => {
    expect(await failure(call(client))).toBeInstanceOf(ServiceNotFoundError);
  });
});

describe("a create answer holding its key in a field of the service's own", () => {
  it("is malformed, of unknown outcome, naming keyField; read once keyField names the field", async () => {
    svc.emulator.state.behaviour.createAnswerShape = "renamedField";
    try {
      const order = { productCode: "nas.capacity.standard" };
      const err = await failure(client.subscribeNas(order));
      expect(err).toBeInstanceOf(ServiceMalformedResponseError);
      expect(err).toMatchObject({
        outcomeUnknown: true,
        message: expect.stringMatching(/requestNo.*service\.subscriptionResult\.keyField/),
      });
      const mapped = svc.newClient({ subscriptionResult: { keyField: "requestNo" } });
      const key = await mapped.subscribeNas(order);
      expect(svc.emulator.state.subscriptions.get(key)?.kind).toBe("nas");
    } finally {
      svc.emulator.state.behaviour.createAnswerShape = "key";
    }
  });
});
