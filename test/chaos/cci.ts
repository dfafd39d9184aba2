/**
 * CciInstances under chaos: each observes a running instance seeded in the emulator
 * for the run and saves two images from it. The image save has no lookup (the service
 * lists no images), so its protocol is a ledger in an annotation (cciinstance/images.ts):
 * a save is never sent twice, and one whose answer was lost is reported as
 * SaveOutcomeUnknown instead. The checks: no image saved twice, every image the status
 * calls Saved in the service exactly once under the id the status names, every image
 * either Saved or reported unknown once the run settles, and the instance never
 * changed by a deletion.
 */
import { cciInstanceCrd } from "../../src/crds/cciinstance.js";
import { applySeed } from "../../src/emulator/seeding.js";
import type { RunningEmulator } from "../../src/emulator/server.js";
import type { KubeClient } from "../../src/runtime/kube.js";
import type { KubeObject, ResourceDescriptor } from "../../src/runtime/resource.js";
import type { ChaosObject } from "./deletes.js";

/** The CciInstances of the chaos run. */
export const CCI: ResourceDescriptor = cciInstanceCrd;

/** Name of the i-th CciInstance (also the name of its instance). */
export const cciName = (prefix: string, i: number) => `${prefix}-cci-${i}`;

/** The tags saved of each instance's image. */
const TAGS = ["a", "b"];

/** Seeds `count` running instances and answers the CciInstances that observe them. */
export function cciObjects(
  emulator: RunningEmulator,
  namespace: string,
  prefix: string,
  count: number,
): ChaosObject[] {
  const ids = applySeed(emulator.state, {
    cci: Array.from({ length: count }, (_, i) => ({
      id: `cci-${prefix}-${i}`,
      name: cciName(prefix, i),
    })),
  }).cci;
  return ids.map((instanceId, i) => ({
    res: CCI,
    obj: {
      metadata: { name: cciName(prefix, i), namespace },
      spec: {
        instanceId,
        images: TAGS.map((tag) => ({ imageName: cciName(prefix, i), tag })),
      },
    },
    keepsRemote: true,
  }));
}

interface ImageStatus {
  imageName: string;
  tag: string;
  imageId?: string;
  state: string;
  message?: string;
}

const imagesOf = (obj: KubeObject) =>
  ((obj.status as { images?: ImageStatus[] } | undefined)?.images ?? []) as ImageStatus[];

const unknownImage = (s: ImageStatus) =>
  s.state === "Failed" && (s.message ?? "").startsWith("SaveOutcomeUnknown");

/** Whether a CciInstance is done: Ready, and each image Saved or reported unknown. */
export function cciSettled(obj: KubeObject): boolean {
  const conditions =
    (obj.status as { conditions?: { type: string; status: string }[] } | undefined)?.conditions ??
    [];
  const ready = conditions.some((c) => c.type === "Ready" && c.status === "True");
  const images = imagesOf(obj);
  return (
    ready &&
    images.length === TAGS.length &&
    images.every((s) => s.state === "Saved" || unknownImage(s))
  );
}

/** What the image checks found. */
export interface ImageFindings {
  /** Images the status calls Saved (each in the service exactly once). */
  saved: number;
  /** Images reported SaveOutcomeUnknown (the documented answer to a lost save). */
  outcomeUnknown: number;
  /** Images saved in the service more than once, as `instance imageName:tag xN`. */
  savedTwice: string[];
  violations: string[];
}

/** Checks the images of the CciInstances left (`deleted` ones: only their instance kept). */
export async function checkImages(args: {
  kube: KubeClient;
  emulator: RunningEmulator;
  namespace: string;
  prefix: string;
  count: number;
  deleted: ReadonlySet<string>;
}): Promise<ImageFindings> {
  const { emulator, prefix } = args;
  const violations: string[] = [];
  const savedTwice: string[] = [];
  let saved = 0;
  let outcomeUnknown = 0;
  const objects = new Map(
    (await args.kube.list(CCI, args.namespace)).items.map((o) => [o.metadata?.name ?? "", o]),
  );
  for (let i = 0; i < args.count; i++) {
    const name = cciName(prefix, i);
    const instance = emulator.state.cci.get(`cci-${prefix}-${i}`);
    if (!instance) {
      violations.push(`CciInstance/${name}: its instance is gone from the service`);
      continue;
    }
    for (const tag of TAGS) {
      const remote = instance.images.filter((m) => m.imageName === name && m.tag === tag);
      if (remote.length > 1) savedTwice.push(`${instance.id} ${name}:${tag} x${remote.length}`);
      if (args.deleted.has(`${CCI.kind}/${name}`)) continue;
      const obj = objects.get(name);
      const status = obj && imagesOf(obj).find((s) => s.imageName === name && s.tag === tag);
      if (status?.state === "Saved") {
        saved += 1;
        if (remote.length !== 1 || remote[0]?.imageId !== status.imageId) {
          violations.push(
            `CciInstance/${name}: ${name}:${tag} Saved as ${status.imageId}, the service has ${remote.map((m) => m.imageId).join(", ") || "none"}`,
          );
        }
      } else if (status && unknownImage(status)) {
        outcomeUnknown += 1;
      } else {
        violations.push(
          `CciInstance/${name}: ${name}:${tag} neither Saved nor SaveOutcomeUnknown (${status?.state ?? "no status"})`,
        );
      }
    }
  }
  for (const s of savedTwice) violations.push(`an image was saved twice: ${s}`);
  return { saved, outcomeUnknown, savedTwice, violations };
}
