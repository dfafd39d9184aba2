/**
 * The emulator over raw HTTP: authentication, the spec's validation (which the client
 * would partly catch before sending), fault injection on the wire, and the request log.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type EmulatedService, startEmulatedService } from "./harness.js";

let svc: EmulatedService;

interface Answer {
  httpStatus: number;
  status?: number;
  message?: string;
  data?: unknown;
  text: string;
  headers: Headers;
}

async function call(
  method: string,
  path: string,
  body?: unknown,
  key: string | null = svc.apiKey,
): Promise<Answer> {
  const headers: Record<string, string> = { "Content-Type": "application/json" };
  if (key !== null) headers.Authorization = `Bearer ${key}`;
  const res = await fetch(svc.emulator.url + path, {
    method,
    headers,
    ...(body === undefined ? {} : { body: typeof body === "string" ? body : JSON.stringify(body) }),
  });
  const text = await res.text();
  let envelope: { status?: number; message?: string; data?: unknown } = {};
  try {
    envelope = JSON.parse(text);
  } catch {
    // not JSON: kept in `text`
  }
  return { httpStatus: res.status, ...envelope, text, headers: res.headers };
}

const task = {
  name: "t",
  createType: "DIRECT",
  productCode: "train.cpu.16",
  workerCount: 1,
  image: "i",
};

beforeAll(async () => {
  svc = await startEmulatedService();
});
afterAll(() => svc.stop());
beforeEach(() => {
  svc.emulator.state.reset();
  svc.emulator.faults.clear();
  svc.emulator.requestLog.clear();
  svc.emulator.state.behaviour.httpStatusMirrorsEnvelope = false;
});

describe("authentication", () => {
  it.each([
    ["no Authorization header", null],
    ["a wrong key", "wrong-key"],
  ])("answers %s with the 403 envelope on HTTP 200", async (_reason, key) => {
    const a = await call("GET", "/v1/product/list-for-nas-storage", undefined, key);
    expect(a).toMatchObject({ httpStatus: 200, status: 403, message: "Forbidden", data: {} });
  });

  it("mirrors the envelope status on the HTTP status line when asked to", async () => {
    svc.emulator.state.behaviour.httpStatusMirrorsEnvelope = true;
    expect((await call("GET", "/v1/cci/instance/list", undefined, null)).httpStatus).toBe(403);
  });

  it("answers success with status 200 and message OK", async () => {
    expect(await call("GET", "/v1/cci/instance/list")).toMatchObject({
      status: 200,
      message: "OK",
    });
  });
});

describe("validation as the spec states it", () => {
  it.each([
    ["a missing required field", { ...task, image: undefined }, /body\.image/],
    ["a priority of 0", { ...task, priority: 0 }, /body\.priority/],
    ["a priority of 4", { ...task, priority: 4 }, /body\.priority/],
    ["an unknown createType", { ...task, createType: "CLONE" }, /createType/],
    [
      "two framework spellings that disagree",
      { ...task, trainingFramwork: "mpi", trainingFramework: "pytorch" },
      /disagree/,
    ],
  ])("refuses a task with %s, saying what is wrong", async (_reason, body, message) => {
    const a = await call("POST", "/v1/subscription/training/create", body);
    expect(a.status).toBe(400);
    expect(a.message).toMatch(message);
  });

  it.each([
    ["trainingFramwork", "PYTORCH", "PyTorch"],
    ["trainingFramework", "tensorflow", "TensorFlow"],
  ])("accepts the framework as %s in any letter case", async (field, value, shown) => {
    const a = await call("POST", "/v1/subscription/training/create", {
      ...task,
      [field]: value,
      trainingType: "Pre_Training",
    });
    expect(a.status).toBe(200);
    const detail = await call(
      "GET",
      `/v1/training/instance/task-${svc.emulator.idTag}-000001/detail`,
    );
    expect(detail.data).toMatchObject({ trainingFramwork: shown, trainingType: "PRE_TRAINING" });
  });

  it("refuses a scale whose body id differs from the path id", async () => {
    const [id] = (await svc.admin.seed({ nas: [{}] })).nas;
    const a = await call("POST", `/v1/nasStorage/instance/${id}/scale`, {
      id: "other",
      scaleType: "ScaleUp",
      capacity: 1,
    });
    expect(a).toMatchObject({
      status: 400,
      message: `the body id other does not equal the path id ${id}`,
    });
  });

  it("refuses a scale type other than ScaleUp or ScaleDown", async () => {
    const [id] = (await svc.admin.seed({ nas: [{}] })).nas;
    const a = await call("POST", `/v1/nasStorage/instance/${id}/scale`, {
      id,
      scaleType: "Double",
      capacity: 1,
    });
    expect(a.status).toBe(400);
  });

  it("refuses a mount path outside the spec's pattern", async () => {
    const [id] = (await svc.admin.seed({ nas: [{}] })).nas;
    const a = await call("PUT", `/v1/nasStorage/instance/${id}/mountPath`, { mountPath: "/a b" });
    expect(a.status).toBe(400);
    expect(a.message).toMatch(/mountPath must match/);
  });

  it("refuses page 0 and a page size that is not a number", async () => {
    expect((await call("GET", "/v1/cci/instance/list?pageNo=0")).message).toMatch(
      /pageNo starts at 1/,
    );
    expect((await call("GET", "/v1/cci/instance/list?pageSize=ten")).status).toBe(400);
  });

  it("refuses a body that is not JSON", async () => {
    expect(await call("POST", "/v1/volumes", "{oops")).toMatchObject({
      status: 400,
      message: "request body is not valid JSON",
    });
  });

  it("answers an unknown path with a plain 404, not an envelope", async () => {
    const a = await call("GET", "/v1/nowhere");
    expect(a.httpStatus).toBe(404);
    expect(a.status).toBeUndefined();
  });

  it("answers an unknown id with a 404 envelope naming it", async () => {
    expect(await call("GET", "/v1/cci/instance/cci-9/error-details")).toMatchObject({
      status: 404,
      message: "CCI instance cci-9 not found",
    });
  });
});

describe("faults on the wire", () => {
  it("drops the connection without an answer", async () => {
    svc.emulator.faults.set([{ kind: "drop" }]);
    await expect(call("GET", "/v1/cci/instance/list")).rejects.toThrow();
  });

  it("sends a truncated JSON body with HTTP 200", async () => {
    svc.emulator.faults.set([{ kind: "malformed" }]);
    const a = await call("GET", "/v1/cci/instance/list");
    expect(a.httpStatus).toBe(200);
    expect(() => JSON.parse(a.text)).toThrow();
  });

  it("answers 429 with Retry-After when asked", async () => {
    svc.emulator.faults.set([{ kind: "rateLimit", retryAfterSeconds: 3 }]);
    const a = await call("GET", "/v1/cci/instance/list");
    expect(a).toMatchObject({ httpStatus: 429, status: 429 });
    expect(a.headers.get("retry-after")).toBe("3");
  });

  it("answers an error envelope of the configured status and message", async () => {
    svc.emulator.faults.set([{ kind: "error", status: 503, message: "maintenance" }]);
    expect(await call("GET", "/v1/cci/instance/list")).toMatchObject({
      httpStatus: 200,
      status: 503,
      message: "maintenance",
    });
  });

  it("adds latency", async () => {
    svc.emulator.faults.set([{ kind: "latency", latencyMs: 120 }]);
    const started = performance.now();
    await call("GET", "/v1/cci/instance/list");
    expect(performance.now() - started).toBeGreaterThanOrEqual(110);
  });

  it("leaves the admin API alone", async () => {
    svc.emulator.faults.set([{ kind: "drop" }]);
    await expect(svc.admin.health()).resolves.toBeUndefined();
  });
});

describe("the request log", () => {
  it("records method, path, query, body, time, outcome and fault, never the key", async () => {
    await call("POST", "/v1/volumes", { name: "v", sizeGB: 5, volumeType: "ssd" });
    svc.emulator.faults.set([{ kind: "error", times: 1 }]);
    await call("GET", "/v1/cci/instance/list?pageNo=2");
    const [create, list] = svc.emulator.requestLog.read();
    expect(create).toMatchObject({
      method: "POST",
      path: "/v1/volumes",
      endpoint: "createVolume",
      body: { name: "v", sizeGB: 5, volumeType: "ssd" },
      authorized: true,
      status: 200,
      time: expect.stringMatching(/Z$/),
    });
    expect(list).toMatchObject({ query: { pageNo: "2" }, status: 500, fault: "error" });
    expect(JSON.stringify(svc.emulator.requestLog.read())).not.toContain(svc.apiKey);
  });
});
