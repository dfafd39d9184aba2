/**
 * Every status stays bounded whatever the service answers: each kind's status builder is
 * fed the largest record the spec allows (it documents no string length, so every
 * string is 100 000 characters; lists as long as the kinds' limits allow, or longer
 * where the service alone decides), with every condition the kind can carry; the
 * status's JSON must stay under the kind's bound (test/support/status-size.ts, stated in
 * docs/custom-resources.md) and no string in it be longer than the longest cut
 * (src/runtime/object-writes.ts). The TrainingJob's: trainingjob/status-size.test.ts; the
 * catalog objects': catalog/catalog-size.test.ts.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import {
  conditionsOf,
  jsonBytes,
  kibibytes,
  largestStoredConfig,
  long,
  longestString,
  measuredStatus,
  NOW,
  range,
  STATUS_BOUNDS_KIB,
} from "../../test/support/status-size.js";
import {
  BlockVolumeStatus,
  BucketStatus,
  CciInstanceStatus,
  FileSystemStatus,
  NasVolumeStatus,
  ServiceConnectionStatus,
  TrainingTemplateStatus,
} from "../crds/index.js";
import {
  MAX_CONDITION_MESSAGE_CHARS,
  REMOTE_ADDRESS_CHARS,
  setCondition,
} from "../runtime/index.js";
import type { BlockVolume, CciInstance, FileSystem, NasInstance } from "../service/index.js";
import type { TrainingTemplate as RemoteTemplate } from "../service/schemas/template.js";
import { blockVolumeStatus } from "./blockvolume/controller.js";
import { bucketStatus } from "./bucket/controller.js";
import { decideImages } from "./cciinstance/images.js";
import { observedStatus } from "./cciinstance/status.js";
import { readyConditionOf } from "./connections/status.js";
import { planMounts } from "./filesystem/mounts.js";
import { fileSystemStatus } from "./filesystem/status.js";
import { nasStatus } from "./nasvolume/decisions.js";
import { templateStatus } from "./trainingtemplate/controller.js";

const nas: NasInstance = {
  id: "nas-000001",
  name: long("n"),
  description: long("d"),
  orderInstanceId: long("o"),
  status: long("s"),
  storageType: long("t"),
  quota: "1024",
  used: "512",
  mountPath: long("/"),
  resource: { quota: "1024", productName: long("p"), productCode: long("c") },
  createdTime: long("1"),
  lastUpdateTime: long("2"),
  releaseTime: long("3"),
  tenantId: long("t"),
  price: long("9"),
  priceUnit: long("u"),
  sharePolicy: { policy: long("s") },
  createdBy: long("b"),
  createdByName: long("b"),
  createScene: long("c"),
  createSceneInstanceId: long("i"),
  isDefaultStorage: true,
  aidcId: 1,
};

const cciRecord: CciInstance = {
  id: "cci-1",
  name: long("n"),
  description: long("d"),
  orderInstanceId: long("o"),
  status: "ERROR",
  subStatus: long("s"),
  priority: 1,
  aidcId: 1,
  createTime: long("1"),
  updateTime: long("2"),
  startTime: long("3"),
  stopTime: long("4"),
  releaseTime: long("5"),
  autoStopTime: long("6"),
  autoReleaseTime: long("7"),
  autoStopEnable: true,
  autoReleaseEnable: true,
  image: long("i"),
  resource: {
    cpuCores: long("c"),
    memoryGB: long("m"),
    gpuName: long("g"),
    gpuCount: long("n"),
    diskGB: long("d"),
    productName: long("p"),
    productCode: long("c"),
  },
  env: Object.fromEntries(
    range(1000).map((i) => [`${i}${long("K")}`, `secret-value-${long("v")}`]),
  ),
  webSSHUrl: long("w"),
  jupyterUrl: long("j"),
  vscodeUrl: long("v"),
  tenantId: long("t"),
  tenantName: long("t"),
  createdBy: long("b"),
  creatorName: long("b"),
  jupyterHealth: true,
  vscodeHealth: true,
  saveImageStatus: false,
  storageSize: 100,
  price: long("9"),
  priceUnit: 1,
  chargeMethod: 1,
};

describe("the status size of every kind, from the largest answer of the service", () => {
  it(`keeps a NasVolume under ${STATUS_BOUNDS_KIB.NasVolume} KiB`, () => {
    const obj = {
      apiVersion: "aidc.io/v1alpha1",
      kind: "NasVolume",
      metadata: { name: "data", namespace: "ns" },
      spec: { productCode: "p", deletionPolicy: "Orphan" as const },
    };
    const facts = {
      externalId: "nas-000001",
      subscriptionKey: "k",
      subscription: { outcome: "Failed" as const, message: long("f") },
    };
    // The subscription's message is the service's: the loop cuts it (managed/order.ts).
    const status = nasStatus(obj, { ...facts, subscription: { outcome: "Failed" } }, nas);
    const { whole, bytes } = measuredStatus("NasVolume", NasVolumeStatus, {
      ...status,
      subscription: { outcome: "Failed", message: "f".repeat(1024) },
    });
    expect(bytes).toBeLessThan(kibibytes(STATUS_BOUNDS_KIB.NasVolume));
    expect(longestString(whole)).toBeLessThanOrEqual(REMOTE_ADDRESS_CHARS);
  });

  it(`keeps a CciInstance with 32 failed image saves and 1000 env names under ${STATUS_BOUNDS_KIB.CciInstance} KiB`, () => {
    const observed = observedStatus({
      instanceId: "cci-1",
      record: cciRecord,
      detail: cciRecord,
      errorDetails: {
        instanceId: "cci-1",
        instanceStatus: long("s"),
        instanceSubStatus: long("s"),
        errorDescription: long("d"),
        suggestion: long("s"),
        errorDetail: long("e"),
      },
    });
    const images = range(32).map((i) => ({
      imageName: `${i}${"i".repeat(250)}`,
      tag: `${i}${"t".repeat(120)}`,
    }));
    const ledger = Object.fromEntries(
      images.map((image) => [
        `${image.imageName}:${image.tag}`,
        { at: NOW.toISOString(), attempts: 3, failed: long("x") },
      ]),
    );
    const { statuses } = decideImages({
      images,
      ledger,
      instance: { status: "RUNNING", saveImageStatus: false, observedAt: NOW },
      now: NOW,
      backoff: { baseMs: 1_000, maxMs: 60_000 },
    });
    expect(statuses).toHaveLength(32);
    const { whole, bytes } = measuredStatus("CciInstance", CciInstanceStatus, {
      ...observed,
      images: statuses,
    });
    expect(observed.envKeys).toHaveLength(128);
    expect(bytes).toBeLessThan(kibibytes(STATUS_BOUNDS_KIB.CciInstance));
    expect(longestString(whole)).toBeLessThanOrEqual(REMOTE_ADDRESS_CHARS);
    expect(JSON.stringify(whole)).not.toContain("secret-value");
  });

  it(`keeps a BlockVolume under ${STATUS_BOUNDS_KIB.BlockVolume} KiB`, () => {
    const remote: BlockVolume = {
      id: "vol-1",
      name: long("n"),
      description: long("d"),
      sizeGB: 100,
      volumeType: long("t"),
      status: long("s"),
      instanceId: long("i"),
      createdTime: long("1"),
    };
    const obj = {
      apiVersion: "aidc.io/v1alpha1",
      kind: "BlockVolume",
      metadata: { name: "v", namespace: "ns" },
      spec: { sizeGB: 100, deletionPolicy: "Orphan" as const },
    } as Parameters<typeof blockVolumeStatus>[0];
    const status = blockVolumeStatus(obj, { externalId: "vol-1" }, remote);
    const { whole, bytes } = measuredStatus("BlockVolume", BlockVolumeStatus, status);
    expect(bytes).toBeLessThan(kibibytes(STATUS_BOUNDS_KIB.BlockVolume));
    expect(longestString(whole)).toBeLessThanOrEqual(REMOTE_ADDRESS_CHARS);
  });

  it(`keeps a FileSystem with 16 mounts and 200 mounts of others under ${STATUS_BOUNDS_KIB.FileSystem} KiB`, () => {
    const desired = range(16).map((i) => ({
      name: `m${i}${"x".repeat(60)}`,
      instanceId: `cci-${i}`,
      mountPath: `/${"p".repeat(62)}`,
    }));
    const fs: FileSystem = {
      id: "fs-1",
      name: long("n"),
      description: long("d"),
      sizeGB: 100,
      type: long("t"),
      protocol: long("p"),
      status: "available",
      aidcId: 1,
      createdTime: long("1"),
      mounts: [
        // Each mount of the spec, mounted elsewhere than the spec asks (the longest entry).
        ...desired.map((d, i) => ({
          id: `mnt-${i}`,
          instanceId: d.instanceId,
          mountPath: long("/"),
          status: long("s"),
          address: long("a"),
        })),
        ...range(200).map((i) => ({ id: `other-${i}`, instanceId: `cci-other-${i}` })),
      ],
    };
    const plan = planMounts({ desired, remote: fs, recorded: [], removalPossible: true });
    const obj = {
      apiVersion: "aidc.io/v1alpha1",
      kind: "FileSystem",
      metadata: { name: "f", namespace: "ns" },
      spec: {},
    } as Parameters<typeof fileSystemStatus>[0];
    const status = fileSystemStatus(obj, { externalId: "fs-1" }, { fs, plan });
    const { whole, bytes } = measuredStatus("FileSystem", FileSystemStatus, status);
    expect(status.otherMounts).toHaveLength(32);
    expect(bytes).toBeLessThan(kibibytes(STATUS_BOUNDS_KIB.FileSystem));
    expect(longestString(whole)).toBeLessThanOrEqual(REMOTE_ADDRESS_CHARS);
  });

  it(`keeps a Bucket under ${STATUS_BOUNDS_KIB.Bucket} KiB`, () => {
    const obj = {
      apiVersion: "aidc.io/v1alpha1",
      kind: "Bucket",
      metadata: { name: "b".repeat(63), namespace: "ns", uid: "u1" },
      spec: { adopt: false, forceDestroy: false, deletionPolicy: "Orphan" as const },
    } as Parameters<typeof bucketStatus>[0];
    const status = bucketStatus(
      obj,
      { externalId: "b".repeat(63) },
      {
        name: "b".repeat(63),
        url: `https://${"h".repeat(2040)}/${"b".repeat(63)}`,
        region: long("r"),
        creationDate: NOW,
        versioning: { notImplemented: true },
        lifecycle: { notImplemented: true },
        policy: { notImplemented: true },
        tags: { notImplemented: true },
        cors: { notImplemented: true },
      } as Parameters<typeof bucketStatus>[2],
      {
        time: NOW.toISOString(),
        changes: range(5).map((i) => `feature ${i} ${"c".repeat(100)}`),
        drift: true,
      },
      range(5).map((i) => `refused ${i} ${"r".repeat(100)}`),
    );
    const { whole, bytes } = measuredStatus("Bucket", BucketStatus, status);
    expect(bytes).toBeLessThan(kibibytes(STATUS_BOUNDS_KIB.Bucket));
    // The endpoint is the connection's objectStorage URL (at most 2048) and the name.
    expect(longestString(whole)).toBeLessThanOrEqual(2048 + 64);
  });

  it(`keeps a TrainingTemplate's stored configuration (status.config) under ${STATUS_BOUNDS_KIB.TrainingTemplate} KiB`, () => {
    const remote = { id: "tpl-1", ...largestStoredConfig } as RemoteTemplate;
    const obj = {
      apiVersion: "aidc.io/v1alpha1",
      kind: "TrainingTemplate",
      metadata: { name: "t", namespace: "ns" },
      spec: { deletionPolicy: "Orphan" as const },
    } as Parameters<typeof templateStatus>[0];
    const status = templateStatus(obj, { externalId: "tpl-1" }, remote);
    const { whole, bytes } = measuredStatus("TrainingTemplate", TrainingTemplateStatus, status);
    expect(status.config?.envKeys).toHaveLength(64);
    expect(JSON.stringify(whole)).not.toContain("secret-value");
    expect(bytes).toBeLessThan(kibibytes(STATUS_BOUNDS_KIB.TrainingTemplate));
    expect(longestString(whole)).toBeLessThanOrEqual(REMOTE_ADDRESS_CHARS);
  });

  it(`keeps a ServiceConnection whose check failed with the longest answer under ${STATUS_BOUNDS_KIB.ServiceConnection} KiB`, () => {
    const ready = readyConditionOf({ outcome: "failed", error: new Error(long("e")) });
    const conditions = setCondition(conditionsOf("ServiceConnection"), ready, 1, NOW);
    const status = {
      observedGeneration: 1,
      objectsUsing: 1_000_000,
      lastCheckedTime: NOW.toISOString(),
      conditions,
    };
    expect(() => ServiceConnectionStatus.parse(status)).not.toThrow();
    expect(jsonBytes(status)).toBeLessThan(kibibytes(STATUS_BOUNDS_KIB.ServiceConnection));
    expect(longestString(status)).toBeLessThanOrEqual(MAX_CONDITION_MESSAGE_CHARS);
  });
});

describe("the stated bounds", () => {
  it("are the tested ones in docs/custom-resources.md's table", () => {
    const page = readFileSync(new URL("../../docs/custom-resources.md", import.meta.url), "utf8");
    const docs = page.slice(page.indexOf("**Status size**"));
    const row = (kind: string) =>
      docs.match(new RegExp(`^\\s*\\| ${kind} \\| (.*) \\|$`, "m"))?.[1];
    for (const [kind, kib] of Object.entries(STATUS_BOUNDS_KIB)) {
      if (kind === "TrainingJob1024Pods") {
        expect(row("TrainingJob")).toContain(`${kib} KiB with 1024`);
      } else {
        expect(row(kind), kind).toMatch(new RegExp(`^${kib} KiB\\b`));
      }
    }
  });
});
