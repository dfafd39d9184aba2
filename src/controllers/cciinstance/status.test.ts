import { describe, expect, it } from "vitest";
import type { CciInstanceStatus } from "../../crds/cciinstance.js";
import type { CciInstance } from "../../service/schemas/cci.js";
import {
  errorKey,
  needsDetail,
  type ObservedStatus,
  observedStatus,
  readyCondition,
} from "./status.js";

const record: CciInstance = {
  id: "cci-1",
  name: "alice",
  status: "RUNNING",
  subStatus: "RUNNING",
  aidcId: 1,
  orderInstanceId: "order-1",
  image: "img:1",
  createTime: "2025-01-06T09:00:00Z",
  updateTime: "2025-01-06T09:05:00Z",
  startTime: "2025-01-06T09:01:30Z",
  autoStopEnable: true,
  autoStopTime: "2025-01-08T00:00:00Z",
  autoReleaseEnable: false,
  resource: { cpuCores: "8", memoryGB: "64", gpuName: "-", gpuCount: "0", diskGB: "200" },
  webSSHUrl: "https://ssh/1",
  jupyterUrl: "https://jupyter/1",
  vscodeUrl: "",
  jupyterHealth: true,
  vscodeHealth: false,
  saveImageStatus: false,
};

describe("observedStatus", () => {
  it("maps a list record: URLs with health, resource without the no-GPU dash, times, auto stop", () => {
    const s = observedStatus({ instanceId: "cci-1", record });
    expect(s).toEqual({
      instanceId: "cci-1",
      name: "alice",
      remoteStatus: "RUNNING",
      remoteSubStatus: "RUNNING",
      aidcId: 1,
      orderInstanceId: "order-1",
      image: "img:1",
      urls: { webSSH: "https://ssh/1", jupyter: "https://jupyter/1" },
      health: { jupyter: true, vscode: false },
      resource: { cpuCores: "8", memoryGB: "64", gpuCount: "0", diskGB: "200" },
      createdTime: "2025-01-06T09:00:00Z",
      lastUpdateTime: "2025-01-06T09:05:00Z",
      startTime: "2025-01-06T09:01:30Z",
      autoStopEnabled: true,
      autoStopTime: "2025-01-08T00:00:00Z",
      autoReleaseEnabled: false,
      saveImageInProgress: false,
    });
  });

  const previous: CciInstanceStatus = { instanceId: "cci-1", price: "11.00", priceUnit: 1 };
  const cases: {
    reason: string;
    input: Parameters<typeof observedStatus>[0];
    want: Partial<ObservedStatus>;
  }[] = [
    {
      reason: "price comes from the detail when it was read",
      input: { instanceId: "cci-1", record, detail: { id: "cci-1", price: "12.50", priceUnit: 2 } },
      want: { price: "12.50", priceUnit: 2 },
    },
    {
      reason: "price is kept from the previous status between detail reads",
      input: { instanceId: "cci-1", record, previous },
      want: { price: "11.00", priceUnit: 1 },
    },
    {
      reason: "a previous status of another instance lends nothing",
      input: { instanceId: "cci-1", record, previous: { ...previous, instanceId: "cci-2" } },
      want: { price: undefined, priceUnit: undefined },
    },
    {
      reason: "error details become status.error",
      input: {
        instanceId: "cci-1",
        record: { ...record, status: "ERROR" },
        errorDetails: {
          instanceStatus: "FAILED",
          instanceSubStatus: "CREATE_VOLUME_FAILED",
          errorDescription: "disk failed",
          suggestion: "recreate",
          errorDetail: "timeout",
        },
      },
      want: {
        error: {
          instanceStatus: "FAILED",
          instanceSubStatus: "CREATE_VOLUME_FAILED",
          description: "disk failed",
          suggestion: "recreate",
          detail: "timeout",
        },
      },
    },
  ];
  for (const c of cases) {
    it(c.reason, () => {
      const got = observedStatus(c.input);
      for (const [k, v] of Object.entries(c.want)) {
        expect(got[k as keyof ObservedStatus], k).toEqual(v);
      }
    });
  }
});

describe("needsDetail", () => {
  const bound: CciInstanceStatus = {
    instanceId: "cci-1",
    remoteStatus: "RUNNING",
    lastUpdateTime: "2025-01-06T09:05:00Z",
  };
  const cases = [
    { reason: "a first bind reads the detail", prev: undefined, rec: record, want: true },
    {
      reason: "an unchanged instance is served by the list alone",
      prev: bound,
      rec: record,
      want: false,
    },
    {
      reason: "a changed status reads the detail again",
      prev: bound,
      rec: { ...record, status: "STOPPED" },
      want: true,
    },
    {
      reason: "a changed updateTime reads the detail again",
      prev: bound,
      rec: { ...record, updateTime: "2025-01-07T00:00:00Z" },
      want: true,
    },
    {
      reason: "a status of another instance reads the detail",
      prev: { ...bound, instanceId: "cci-2" },
      rec: record,
      want: true,
    },
  ];
  for (const c of cases) it(c.reason, () => expect(needsDetail(c.prev, c.rec)).toBe(c.want));
});

describe("readyCondition", () => {
  const cases: { reason: string; status: ObservedStatus; want: object; message?: RegExp }[] = [
    {
      reason: "RUNNING is Ready",
      status: { remoteStatus: "RUNNING" },
      want: { status: "True", reason: "Running" },
    },
    {
      reason: "STOPPED is not Ready",
      status: { remoteStatus: "STOPPED", remoteSubStatus: "STOPPED" },
      want: { status: "False", reason: "Stopped" },
    },
    {
      reason: "PENDING is not Ready yet",
      status: { remoteStatus: "PENDING" },
      want: { status: "False", reason: "Pending" },
    },
    {
      reason: "a status the spec does not name is Unavailable, quoted verbatim",
      status: { remoteStatus: "MIGRATING" },
      want: { status: "False", reason: "Unavailable" },
      message: /MIGRATING/,
    },
    {
      reason: "ERROR is a terminal InstanceFailed carrying description and suggestion",
      status: {
        remoteStatus: "ERROR",
        remoteSubStatus: "CREATE_VOLUME_FAILED",
        error: { description: "disk failed", suggestion: "recreate it" },
      },
      want: { status: "False", reason: "InstanceFailed" },
      message: /ERROR \(CREATE_VOLUME_FAILED\): disk failed: suggestion: recreate it/,
    },
    {
      reason: "FAILED without details is still InstanceFailed",
      status: { remoteStatus: "FAILED" },
      want: { status: "False", reason: "InstanceFailed" },
    },
    {
      reason: "no status at all is Unknown",
      status: {},
      want: { status: "Unknown", reason: "StatusUnknown" },
    },
  ];
  for (const c of cases) {
    it(c.reason, () => {
      const got = readyCondition(c.status);
      expect(got).toMatchObject({ type: "Ready", ...c.want });
      if (c.message) expect(got.message).toMatch(c.message);
    });
  }
});

describe("errorKey", () => {
  it("is the same for the same error and differs for another", () => {
    const a = { description: "x", instanceSubStatus: "A" };
    expect(errorKey(a)).toBe(errorKey({ ...a }));
    expect(errorKey(a)).not.toBe(errorKey({ ...a, instanceSubStatus: "B" }));
    expect(errorKey(undefined)).toBeUndefined();
  });
});
