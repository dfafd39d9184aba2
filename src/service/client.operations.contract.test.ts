/**
 * Contract: what the client learns about which operations the service answers, against
 * the emulator playing a service that lacks some assumed paths (bare 404s).
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { type EmulatedService, startEmulatedService } from "../emulator/harness.js";
import { EndpointDisabledError, ServiceAuthError, ServiceOperationMissingError } from "./errors.js";
import { ASSUMED_OPERATIONS } from "./operation-availability.js";
import type { OperationCaller } from "./operation-caller.js";

let svc: EmulatedService;

beforeAll(async () => {
  svc = await startEmulatedService();
});
afterAll(async () => {
  await svc?.stop();
});
beforeEach(async () => {
  await svc.admin.reset();
  await svc.admin.configure({ missingOperations: [] });
});

describe("operation probes", () => {
  it("take an envelope, even an error one, as present and a bare 404 as missing", async () => {
    await svc.admin.configure({ missingOperations: ["listPods"] });
    const c = svc.newClient();
    // The result query of an unknown key answers an error envelope: the path exists.
    expect(await c.probeOperation("getNasSubscriptionResult")).toBe("present");
    expect(await c.probeOperation("listPods")).toBe("missing");
    expect(c.operations.snapshot()).toEqual({
      getNasSubscriptionResult: "present",
      listPods: "missing",
    });
  });

  it("probe every assumed read operation once at start, never one that changes something", async () => {
    await svc.admin.configure({ missingOperations: ["listNas"] });
    const c = svc.newClient({ endpoints: { deleteNas: "/v1/nasStorage/instance/{id}" } });
    await svc.admin.clearRequests();
    const verdicts = await c.probeAssumedOperations();
    expect(verdicts.listNas).toBe("missing");
    expect(verdicts.getNas).toBe("present");
    expect(verdicts.openPodPort).toBeUndefined();
    expect(verdicts.deleteNas).toBeUndefined();
    const sent = await svc.admin.requests();
    expect(sent.every((r) => r.method === "GET")).toBe(true);
    expect(sent.length).toBe(ASSUMED_OPERATIONS.filter((n) => !n.startsWith("delete")).length - 1);
  });

  it("teach nothing from a refused key: the auth error is thrown, no verdict cached", async () => {
    const c = svc.newClient({ apiKey: () => "wrong-key-0123456789" });
    await expect(c.probeOperation("listNas")).rejects.toBeInstanceOf(ServiceAuthError);
    expect(c.operations.verdict("listNas")).toBe("unknown");
  });
});

describe("requireOperations", () => {
  it("names the missing operation and its config key, and asks again once the verdict is old", async () => {
    await svc.admin.configure({ missingOperations: ["getTrainingSubscriptionResult"] });
    let now = 1_000_000;
    const c = svc.newClient({ recheckMissingMs: 5_000, now: () => now });
    const err = await c
      .requireOperations(["getTrainingSubscriptionResult", "listTrainingTasks"], "a task order")
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ServiceOperationMissingError);
    expect((err as Error).message).toContain("getTrainingSubscriptionResult");
    expect((err as Error).message).toContain("service.endpoints.getTrainingSubscriptionResult");
    expect((err as { external: boolean }).external).toBe(true);

    await svc.admin.configure({ missingOperations: [] });
    // The verdict stands until it is old…
    await expect(c.requireOperations(["getTrainingSubscriptionResult"], "x")).rejects.toThrow();
    now += 5_000;
    // …then the operation is probed again and found.
    await expect(c.requireOperations(["getTrainingSubscriptionResult"], "x")).resolves.toBe(
      undefined,
    );
  });

  it("refuses a disabled operation without a request", async () => {
    const c = svc.newClient({ endpoints: { listNas: null } });
    await svc.admin.clearRequests();
    await expect(c.requireOperations(["listNas"], "a NAS order")).rejects.toBeInstanceOf(
      EndpointDisabledError,
    );
    expect(await svc.admin.requests()).toEqual([]);
  });

  it("learns from ordinary calls too: a bare 404 marks missing, an envelope present again", async () => {
    const c = svc.newClient();
    await svc.admin.configure({ missingOperations: ["listNas"] });
    await expect(c.listNas()).rejects.toBeInstanceOf(ServiceOperationMissingError);
    expect(c.operations.verdict("listNas")).toBe("missing");
    await svc.admin.configure({ missingOperations: [] });
    await c.listNas();
    expect(c.operations.verdict("listNas")).toBe("present");
  });
});

describe("operationState (what a kind's client asks of an OperationCaller)", () => {
  it("says disabled, unknown, missing and present, without a request of its own", async () => {
    await svc.admin.configure({ missingOperations: ["listVolumes"] });
    let now = 1_000_000;
    const c: OperationCaller = svc.newClient({
      endpoints: { deleteVolume: null },
      recheckMissingMs: 5_000,
      now: () => now,
    });
    await svc.admin.clearRequests();
    expect(c.operationState("deleteVolume")).toBe("disabled");
    expect(c.operationState("listVolumes")).toBe("unknown");
    expect(c.operationState("getVolume")).toBe("unknown");
    expect(await svc.admin.requests()).toEqual([]);
    await expect(
      c.requireOperations(["getVolume", "listVolumes"], "a volume create"),
    ).rejects.toBeInstanceOf(ServiceOperationMissingError);
    expect(c.operationState("getVolume")).toBe("present");
    expect(c.operationState("listVolumes")).toBe("missing");
    // A "missing" verdict due for a recheck is unknown again.
    now += 5_000;
    expect(c.operationState("listVolumes")).toBe("unknown");
    await expect(c.requireOperations(["deleteVolume"], "a delete")).rejects.toBeInstanceOf(
      EndpointDisabledError,
    );
    expect(() => c.operationState("getNoSuchThing")).toThrow(/no service operation/);
    await expect(c.requireOperations(["getNoSuchThing"], "x")).rejects.toThrow(
      /no service operation/,
    );
  });
});

describe("request (how a kind's own operations, src/service/kinds, call the service)", () => {
  it("calls an operation of the table by name, as the client's own methods do", async () => {
    const c = svc.newClient();
    const listed = await c.request("listNas", { query: { pageNo: 1, pageSize: 10 } }, z.unknown());
    expect(listed).toEqual(await c.listNas({ pageNo: 1, pageSize: 10 }));
  });

  it("refuses a name the table does not have, sending nothing", async () => {
    const c = svc.newClient();
    await svc.admin.clearRequests();
    expect(() => c.request("getNoSuchThing", {}, z.unknown())).toThrow(
      /no service operation "getNoSuchThing"/,
    );
    expect(() => c.checkedBody("getNoSuchThing", z.object({}), {})).toThrow(/no service operation/);
    expect(await svc.admin.requests()).toEqual([]);
  });

  it("checks a body before sending it", async () => {
    const c = svc.newClient();
    expect(() =>
      c.checkedBody("createVolume", z.object({ size: z.number() }), { size: "big" }),
    ).toThrow(/invalid createVolume request/);
    expect(c.checkedBody("createVolume", z.object({ size: z.number() }), { size: 1 })).toEqual({
      size: 1,
    });
  });
});
