import type * as k8s from "@kubernetes/client-node";
import { expect } from "vitest";
import { allCrds } from "../../src/crds/index.js";
import { refusal } from "../support/crds.js";

/**
 * Manifests the API server must refuse, each with the field the error must name and a
 * piece of the message that says why. Used by crds-validation.test.ts and, on the oldest
 * Kubernetes the chart supports, kube-floor.test.ts.
 */
export interface InvalidCase {
  /** What is wrong, as a sentence. */
  reason: string;
  /** A namespaced kind of the CRD registry (allCrds); the test refuses any other. */
  kind: string;
  /** The whole spec (no base is merged), or undefined for an object without spec. */
  spec: Record<string, unknown> | undefined;
  /** Path of the field the message must name, e.g. `spec.priority`. */
  field: string;
  /** Text the message must contain besides the field (a pattern where versions word it differently). */
  says: string | RegExp;
  /** Text the message must not contain: a rule that has no business with this value. */
  saysNot?: string;
}

const job = { image: "registry.example.com/ml/train:1", productCode: "gpu-1x", workerCount: 1 };
const nas = { productCode: "nas-std" };
const fs = { sizeGB: 10 };
const tpl = { image: "registry.example.com/ml/train:1", productCode: "gpu-1x" };

const tj = (reason: string, spec: object, field: string, says: string | RegExp): InvalidCase => ({
  reason,
  kind: "TrainingJob",
  spec: { ...job, ...spec },
  field,
  says,
});

/**
 * Creates `c` as `name` in `namespace` and checks that the API server refuses it with 422,
 * a message naming its field and saying why.
 */
export async function expectRefused(
  custom: k8s.CustomObjectsApi,
  namespace: string,
  c: InvalidCase,
  name: string,
): Promise<void> {
  const def = allCrds.find((d) => d.kind === c.kind);
  if (!def) throw new Error(`unknown kind ${c.kind}`);
  const body: Record<string, unknown> = {
    apiVersion: `${def.group}/${def.version}`,
    kind: def.kind,
    metadata: { name },
  };
  if (c.spec !== undefined) body.spec = c.spec;
  const err = await custom
    .createNamespacedCustomObject({
      group: def.group,
      version: def.version,
      namespace,
      plural: def.plural,
      body,
    })
    .then(() => undefined)
    .catch((e: unknown) => e);
  expect(err, "the API server accepted it").toBeDefined();
  const { code, message } = refusal(err);
  expect(code).toBe(422);
  expect(message).toContain(`${c.field}:`);
  expect(message).toMatch(c.says);
  if (c.saysNot) expect(message).not.toContain(c.saysNot);
}

/** At least 30 refusals, across the kinds. */
export const invalidCases: InvalidCase[] = [
  tj("priority below 1", { priority: 0 }, "spec.priority", "greater than or equal to 1"),
  tj("priority above 3", { priority: 4 }, "spec.priority", "less than or equal to 3"),
  tj("no workers", { workerCount: 0 }, "spec.workerCount", "greater than or equal to 1"),
  tj(
    "2147483648 workers (beyond a 32-bit integer)",
    { workerCount: 2_147_483_648 },
    "spec.workerCount",
    "less than or equal to 1024",
  ),
  tj(
    "a timeout of more than a year",
    { enableTimeoutCancel: true, timeoutHours: 8761 },
    "spec.timeoutHours",
    "less than or equal to 8760",
  ),
  tj(
    "maxRetryCount beyond 2^53",
    { enableAutoRetry: true, maxRetryCount: 2 ** 53 + 2 },
    "spec.maxRetryCount",
    "less than or equal to 100",
  ),
  tj(
    "unknown createType",
    { createType: "BATCH" },
    "spec.createType",
    'Unsupported value: "BATCH"',
  ),
  tj(
    "unknown trainingType",
    { trainingType: "FINE_TUNING" },
    "spec.trainingType",
    "Unsupported value",
  ),
  tj(
    "framework in the wrong case",
    { trainingFramework: "pytorch" },
    "spec.trainingFramework",
    '"PyTorch"',
  ),
  tj("unknown imageType", { imageType: "public" }, "spec.imageType", "Unsupported value"),
  tj("unknown deletionPolicy", { deletionPolicy: "Retain" }, "spec.deletionPolicy", '"Orphan"'),
  {
    reason: "DIRECT without image",
    kind: "TrainingJob",
    spec: { productCode: "gpu-1x", workerCount: 1 },
    field: "spec.image",
    says: "image is required when createType is DIRECT",
  },
  {
    reason: "DIRECT without productCode",
    kind: "TrainingJob",
    spec: { image: "i:1", workerCount: 1 },
    field: "spec.productCode",
    says: "productCode is required when createType is DIRECT",
  },
  {
    reason: "DIRECT without workerCount",
    kind: "TrainingJob",
    spec: { image: "i:1", productCode: "gpu-1x" },
    field: "spec.workerCount",
    says: "workerCount is required when createType is DIRECT",
  },
  tj(
    "TEMPLATE without templateRef",
    { createType: "TEMPLATE" },
    "spec.templateRef",
    "templateRef is required when createType is TEMPLATE",
  ),
  tj(
    "templateRef on a DIRECT job",
    { templateRef: { name: "t" } },
    "spec.templateRef",
    "templateRef is allowed only when createType is TEMPLATE, not DIRECT",
  ),
  tj(
    "COPY without copyFrom",
    { createType: "COPY" },
    "spec.copyFrom",
    "copyFrom is required when createType is COPY",
  ),
  tj(
    "copyFrom on a TEMPLATE job",
    { createType: "TEMPLATE", templateRef: { name: "t" }, copyFrom: { name: "j" } },
    "spec.copyFrom",
    "copyFrom is allowed only when createType is COPY, not TEMPLATE",
  ),
  tj(
    "templateRef name not a DNS name",
    { createType: "TEMPLATE", templateRef: { name: "My_Template" } },
    "spec.templateRef.name",
    "should match",
  ),
  tj(
    "storage item with both nasVolumeRef and storageId",
    { storage: [{ nasVolumeRef: { name: "data" }, storageId: "s-1" }] },
    "spec.storage[0]",
    "exactly one of nasVolumeRef or storageId",
  ),
  tj(
    "storage item with neither source",
    { storage: [{ mountPath: "/data" }] },
    "spec.storage[0]",
    "exactly one of nasVolumeRef or storageId",
  ),
  tj(
    "storage mountPath with a space",
    { storage: [{ storageId: "s-1", mountPath: "/my data" }] },
    "spec.storage[0].mountPath",
    "^[a-zA-Z0-9_/]{2,64}$",
  ),
  tj(
    "storage mountPath longer than 64",
    { storage: [{ storageId: "s-1", mountPath: `/${"a".repeat(64)}` }] },
    "spec.storage[0].mountPath",
    // Kubernetes 1.30 says "may not be longer than 64".
    /may not be (more|longer) than 64/,
  ),
  tj(
    "two storages at one mountPath",
    {
      storage: [
        { storageId: "s-1", mountPath: "/data" },
        { storageId: "s-2", mountPath: "/data" },
      ],
    },
    "spec.storage",
    "mountPath values must be distinct",
  ),
  tj(
    "more than 16 storages",
    { storage: Array.from({ length: 17 }, (_, i) => ({ storageId: `s-${i}` })) },
    "spec.storage",
    "must have at most 16 items",
  ),
  tj(
    "a storage id with a slash",
    { storage: [{ storageId: "../other", mountPath: "/data" }] },
    "spec.storage[0].storageId",
    "should match",
  ),
  tj(
    "maxRetryCount without enableAutoRetry",
    { maxRetryCount: 3 },
    "spec.maxRetryCount",
    "only with enableAutoRetry: true",
  ),
  tj(
    "maxRetryCount with enableAutoRetry false",
    { enableAutoRetry: false, maxRetryCount: 3 },
    "spec.maxRetryCount",
    "only with enableAutoRetry: true",
  ),
  tj(
    "timeoutHours without enableTimeoutCancel",
    { timeoutHours: 2 },
    "spec.timeoutHours",
    "only with enableTimeoutCancel: true",
  ),
  tj(
    "timeoutHours of 0",
    { enableTimeoutCancel: true, timeoutHours: 0 },
    "spec.timeoutHours",
    "greater than or equal to 1",
  ),
  tj("port 0", { ports: [{ port: 0 }] }, "spec.ports[0].port", "greater than or equal to 1"),
  tj(
    "port above 65535",
    { ports: [{ port: 65536 }] },
    "spec.ports[0].port",
    "less than or equal to 65535",
  ),
  tj(
    "port protocol tcp",
    { ports: [{ port: 80, protocol: "tcp" }] },
    "spec.ports[0].protocol",
    "Unsupported value",
  ),
  tj(
    "one port twice",
    { ports: [{ port: 80 }, { port: 80, protocol: "https" }] },
    "spec.ports[1]",
    "Duplicate value",
  ),
  tj(
    "env name starting with a digit",
    { env: { "1BAD": "x", GOOD: "y" } },
    "spec.env",
    "env names must be letters, digits and underscores, not starting with a digit",
  ),
  tj(
    "a field of the wrong type",
    { workerCount: "two" },
    "spec.workerCount",
    "must be of type integer",
  ),
  {
    reason: "no spec at all",
    kind: "TrainingJob",
    spec: undefined,
    field: "spec",
    says: "Required value",
  },
  {
    reason: "NasVolume without productCode",
    kind: "NasVolume",
    spec: { capacityGB: 10 },
    field: "spec.productCode",
    says: "Required value",
  },
  {
    reason: "FileSystem without sizeGB",
    kind: "FileSystem",
    spec: { protocol: "NFS" },
    field: "spec.sizeGB",
    says: "Required value",
  },
  {
    reason: "FileSystem protocol other than NFS or SMB",
    kind: "FileSystem",
    spec: { ...fs, protocol: "FTP" },
    field: "spec.protocol",
    says: "Unsupported value",
  },
  {
    reason: "FileSystem mount with both a cciInstanceRef and an instanceId",
    kind: "FileSystem",
    spec: {
      ...fs,
      mounts: [{ name: "a", target: { cciInstanceRef: { name: "x" }, instanceId: "cci-1" } }],
    },
    field: "spec.mounts[0].target",
    says: "mounts[].target: exactly one of cciInstanceRef or instanceId must be set",
  },
  {
    reason: "FileSystem mounted twice on one instance",
    kind: "FileSystem",
    spec: {
      ...fs,
      mounts: [
        { name: "a", target: { instanceId: "cci-1" } },
        { name: "b", target: { instanceId: "cci-1" } },
      ],
    },
    field: "spec.mounts",
    says: "a file system is mounted at most once per instance",
  },
  {
    reason: "FileSystem mount path with a hyphen",
    kind: "FileSystem",
    spec: {
      ...fs,
      mounts: [{ name: "a", target: { instanceId: "cci-1" }, mountPath: "/mnt/a-b" }],
    },
    field: "spec.mounts[0].mountPath",
    says: "should match",
  },
  {
    reason: "NasVolume capacity 0",
    kind: "NasVolume",
    spec: { ...nas, capacityGB: 0 },
    field: "spec.capacityGB",
    says: "greater than or equal to 1",
  },
  {
    reason: "NasVolume capacity beyond 2^53 (would be read with lost precision)",
    kind: "NasVolume",
    spec: { ...nas, capacityGB: 2 ** 53 + 2 },
    field: "spec.capacityGB",
    says: "less than or equal to 1048576",
  },
  {
    reason: "NasVolume aidcId beyond a 32-bit integer",
    kind: "NasVolume",
    spec: { ...nas, aidcId: 2_147_483_648 },
    field: "spec.aidcId",
    says: "less than or equal to 2147483647",
  },
  {
    reason: "CciInstance aidcId beyond a 32-bit integer",
    kind: "CciInstance",
    spec: { name: "box", aidcId: 2_147_483_648 },
    field: "spec.aidcId",
    says: "less than or equal to 2147483647",
  },
  {
    reason: "TrainingTemplate workerCount beyond 2^53",
    kind: "TrainingTemplate",
    spec: { ...tpl, workerCount: 2 ** 53 + 2 },
    field: "spec.workerCount",
    says: "less than or equal to 1024",
  },
  {
    reason: "NasVolume mountPath of one character",
    kind: "NasVolume",
    spec: { ...nas, mountPath: "/" },
    field: "spec.mountPath",
    says: "should be at least 2 chars long",
  },
  {
    reason: "NasVolume mountPath with a hyphen",
    kind: "NasVolume",
    spec: { ...nas, mountPath: "/mnt/data-1" },
    field: "spec.mountPath",
    says: "should match",
  },
  {
    reason: "NasVolume unknown deletionPolicy",
    kind: "NasVolume",
    spec: { ...nas, deletionPolicy: "Keep" },
    field: "spec.deletionPolicy",
    says: "Unsupported value",
  },
  {
    reason: "NasVolume adopting the storage id .. (a path segment that moves a request)",
    kind: "NasVolume",
    spec: { ...nas, storageId: ".." },
    field: "spec.storageId",
    says: "should match",
  },
  {
    reason: "CciInstance bound to the id . (a path segment that moves a request)",
    kind: "CciInstance",
    spec: { instanceId: "." },
    field: "spec.instanceId",
    says: "should match",
  },
  {
    reason: "CciInstance selecting nothing",
    kind: "CciInstance",
    spec: {},
    field: "spec",
    says: "exactly one of instanceId or name",
  },
  {
    reason: "CciInstance selecting twice",
    kind: "CciInstance",
    spec: { instanceId: "i-1", name: "n" },
    field: "spec",
    says: "exactly one of instanceId or name",
  },
  {
    reason: "CciInstance aidcId with instanceId",
    kind: "CciInstance",
    spec: { instanceId: "i-1", aidcId: 1 },
    field: "spec.aidcId",
    says: "aidcId is allowed only with name",
  },
  {
    reason: "CciInstance image tag with a space",
    kind: "CciInstance",
    spec: { instanceId: "i-1", images: [{ imageName: "a/b", tag: "v 1" }] },
    field: "spec.images[0].tag",
    says: "should match",
  },
  {
    reason: "CciInstance saving one image twice",
    kind: "CciInstance",
    spec: {
      instanceId: "i-1",
      images: [
        { imageName: "a/b", tag: "v1" },
        { imageName: "a/b", tag: "v1" },
      ],
    },
    field: "spec.images[1]",
    says: "Duplicate value",
  },
  {
    reason: "TrainingTemplate without image",
    kind: "TrainingTemplate",
    spec: { productCode: "gpu-1x" },
    field: "spec.image",
    says: "image is required unless fromTrainingJobRef is set",
  },
  {
    reason: "TrainingTemplate with fromTrainingJobRef and configuration",
    kind: "TrainingTemplate",
    spec: { fromTrainingJobRef: { name: "j" }, workerCount: 2 },
    field: "spec.workerCount",
    says: "workerCount is not allowed with fromTrainingJobRef: the configuration comes from the TrainingJob",
  },
  {
    reason: "TrainingTemplate priority 5",
    kind: "TrainingTemplate",
    spec: { ...tpl, priority: 5 },
    field: "spec.priority",
    says: "less than or equal to 3",
  },
  {
    reason: "TrainingTemplate timeoutHours without its switch",
    kind: "TrainingTemplate",
    spec: { ...tpl, timeoutHours: 1 },
    field: "spec.timeoutHours",
    says: "only with enableTimeoutCancel: true",
  },
  {
    reason: "BlockVolume attached to an instance id and a CciInstance at once",
    kind: "BlockVolume",
    spec: {
      sizeGB: 1,
      volumeType: "ssd",
      attachTo: { instanceId: "cci-0001", cciInstanceRef: { name: "alice" } },
    },
    field: "spec.attachTo",
    says: "exactly one of cciInstanceRef or instanceId must be set",
  },
  {
    reason: "BlockVolume attachTo without a target",
    kind: "BlockVolume",
    spec: { sizeGB: 1, volumeType: "ssd", attachTo: {} },
    field: "spec.attachTo",
    says: "exactly one of cciInstanceRef or instanceId must be set",
  },
  {
    reason: "BlockVolume of 0 GB",
    kind: "BlockVolume",
    spec: { sizeGB: 0, volumeType: "ssd" },
    field: "spec.sizeGB",
    says: "greater than or equal to 1",
  },
  {
    reason: "BlockVolume without a type",
    kind: "BlockVolume",
    spec: { sizeGB: 1 },
    field: "spec.volumeType",
    says: "Required value",
  },
  {
    reason: "BlockVolume attached to the instance id ..",
    kind: "BlockVolume",
    spec: { sizeGB: 1, volumeType: "ssd", attachTo: { instanceId: ".." } },
    field: "spec.attachTo.instanceId",
    says: "should match",
  },
  {
    reason: "managementPolicies with Create but without Observe",
    kind: "NasVolume",
    spec: { ...nas, managementPolicies: ["Create", "Update"] },
    field: "spec.managementPolicies",
    says: "need Observe",
  },
  {
    reason: "managementPolicies with * beside another policy",
    kind: "TrainingJob",
    spec: { ...job, managementPolicies: ["*", "Observe"] },
    field: "spec.managementPolicies",
    says: "list it alone",
  },
  {
    reason: "an empty managementPolicies",
    kind: "FileSystem",
    spec: { ...fs, managementPolicies: [] },
    field: "spec.managementPolicies",
    says: "at least 1",
    saysNot: "need Observe",
  },
  {
    reason: "an unknown management policy",
    kind: "TrainingTemplate",
    spec: { ...tpl, managementPolicies: ["Observe", "Adopt"] },
    field: "spec.managementPolicies[1]",
    says: "Unsupported value",
  },
];
