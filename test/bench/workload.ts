/**
 * The objects the benchmark and the chaos script apply: N NasVolumes and N
 * TrainingJobs with the emulator's catalog products, named `<prefix>-nas-<i>` and
 * `<prefix>-job-<i>` (the remote NAS directory and task names are the same, so the
 * remote resources of each object can be counted by name).
 */
import { blockVolumeCrd } from "../../src/crds/blockvolume.js";
import { fileSystemCrd } from "../../src/crds/filesystem.js";
import { nasVolumeCrd } from "../../src/crds/nasvolume.js";
import { trainingJobCrd } from "../../src/crds/trainingjob.js";
import { trainingTemplateCrd } from "../../src/crds/trainingtemplate.js";
import type { KubeClient } from "../../src/runtime/kube.js";
import type { KubeObject, ResourceDescriptor } from "../../src/runtime/resource.js";

/** The two kinds, as REST coordinates. */
export const NAS: ResourceDescriptor = nasVolumeCrd;
export const JOB: ResourceDescriptor = trainingJobCrd;
/** The file systems of the chaos run. */
export const FS: ResourceDescriptor = fileSystemCrd;
/** The block volumes of the chaos run. */
export const BV: ResourceDescriptor = blockVolumeCrd;
/** The training templates of the chaos run. */
export const TPL: ResourceDescriptor = trainingTemplateCrd;

/** NAS product of the emulator's fixtures. */
export const NAS_PRODUCT = "nas.capacity.standard";
/** Training product of the emulator's fixtures. */
export const TRAINING_PRODUCT = "train.cpu.16";
/** The image of every job. */
export const JOB_IMAGE = "registry.example.com/ml/pytorch:2.5-cuda12";

/** Name of the i-th NasVolume (also its remote directory name). */
export const nasName = (prefix: string, i: number) => `${prefix}-nas-${i}`;
/** Name of the i-th TrainingJob (also its remote task name). */
export const jobName = (prefix: string, i: number) => `${prefix}-job-${i}`;

/** Name of the i-th FileSystem (also its remote name). */
export const fsName = (prefix: string, i: number) => `${prefix}-fs-${i}`;

/** The CCI instances of the emulator's fixtures, the mount targets of the file systems. */
const CCI_INSTANCES = ["cci-0001", "cci-0002", "cci-0003", "cci-0004"];

/** The i-th FileSystem, mounted on one of the emulator's CCI instances. */
export function fileSystem(namespace: string, prefix: string, i: number): KubeObject {
  const name = fsName(prefix, i);
  return {
    metadata: { name, namespace },
    spec: {
      name,
      sizeGB: 10,
      mounts: [
        {
          name: "shared",
          target: { instanceId: CCI_INSTANCES[i % CCI_INSTANCES.length] },
          mountPath: "/mnt/shared",
        },
      ],
    },
  };
}

/** Name of the i-th BlockVolume (also its remote name). */
export const bvName = (prefix: string, i: number) => `${prefix}-bv-${i}`;

/** The CCI instance the i-th BlockVolume is attached to. */
export const bvInstance = (i: number) => CCI_INSTANCES[i % CCI_INSTANCES.length] ?? "cci-0001";

/** The i-th BlockVolume, attached to one of the emulator's CCI instances. */
export function blockVolume(namespace: string, prefix: string, i: number): KubeObject {
  const name = bvName(prefix, i);
  return {
    metadata: { name, namespace },
    spec: { name, sizeGB: 10, volumeType: "ssd", attachTo: { instanceId: bvInstance(i) } },
  };
}

/** The training configuration every job and template of the runs shares. */
const TRAINING = {
  trainingType: "PRE_TRAINING",
  trainingFramework: "PyTorch",
  imageType: "general",
  image: JOB_IMAGE,
  productCode: TRAINING_PRODUCT,
  workerCount: 1,
  startCommand: "python train.py",
};

/** Name of the i-th TrainingTemplate (also its remote template name). */
export const templateName = (prefix: string, i: number) => `${prefix}-tpl-${i}`;

/** The i-th TrainingTemplate. */
export function trainingTemplate(namespace: string, prefix: string, i: number): KubeObject {
  const name = templateName(prefix, i);
  return {
    metadata: { name, namespace },
    spec: { name, ...TRAINING },
  };
}

/** The i-th NasVolume. */
export function nasVolume(namespace: string, prefix: string, i: number): KubeObject {
  const name = nasName(prefix, i);
  return {
    metadata: { name, namespace },
    spec: {
      productCode: NAS_PRODUCT,
      name,
      description: `benchmark volume ${i}`,
      capacityGB: 100,
      mountPath: `/mnt/${name.replace(/-/g, "_")}`.slice(0, 64),
    },
  };
}

/** The i-th TrainingJob; with `withNas`, it mounts the i-th NasVolume. */
export function trainingJob(
  namespace: string,
  prefix: string,
  i: number,
  withNas: boolean,
): KubeObject {
  const name = jobName(prefix, i);
  return {
    metadata: { name, namespace },
    spec: {
      taskName: name,
      createType: "DIRECT",
      ...TRAINING,
      ...(withNas
        ? {
            storage: [
              { nasVolumeRef: { name: nasName(prefix, i) }, mountPath: "/data", readOnly: true },
            ],
          }
        : {}),
    },
  };
}

/**
 * Runs `fn` over `items` with at most `concurrency` in flight; resolves when all are
 * done (rejects with the first error after the others settle).
 */
export async function inParallel<T>(
  items: readonly T[],
  concurrency: number,
  fn: (item: T, index: number) => Promise<void>,
): Promise<void> {
  let next = 0;
  const errors: unknown[] = [];
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      try {
        await fn(items[i] as T, i);
      } catch (err) {
        errors.push(err);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, concurrency) }, worker));
  if (errors.length > 0) throw errors[0];
}

/** Creates a namespace (ignores "already exists"). */
export async function ensureNamespace(kube: KubeClient, name: string): Promise<void> {
  try {
    await kube.request("POST", "/api/v1/namespaces", {}, { metadata: { name } });
  } catch (err) {
    if ((err as { code?: number }).code !== 409) throw err;
  }
}

/**
 * Creates NasVolumes `<prefix>-<i>` (i < count) in `namespace`, 10 at a time, each marked
 * applied on `tracker` just before; resolves with their names.
 */
export async function createNasBatch(
  kube: KubeClient,
  tracker: { markApplied(name: string): void },
  namespace: string,
  prefix: string,
  count: number,
): Promise<string[]> {
  const names = Array.from({ length: count }, (_, i) => nasName(prefix, i));
  await inParallel(names, 10, async (_name, i) => {
    tracker.markApplied(nasName(prefix, i));
    await kube.create(NAS, nasVolume(namespace, prefix, i));
  });
  return names;
}
