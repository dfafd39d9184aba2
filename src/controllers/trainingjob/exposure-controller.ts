/**
 * The TrainingJob exposure controller (`trainingjob-exposure`): keeps the Services and
 * EndpointSlices of `spec.exposePorts` (expose.ts) in step with the open custom ports
 * the TrainingJob controller writes into `status.pods`. It owns them: they are cached
 * (only those labelled `aidc.io/trainingjob`, so not every Service of the cluster), and
 * a change of one (a Service deleted by hand) reconciles its job from the cache, with
 * no list call per poll. Registered only when exposure is enabled
 * (`trainingJob.exposure.enabled`); its rules are declared here, so they are granted
 * only then.
 */
import { AddressAllowList } from "../../config/cidr.js";
import { trainingJobCrd } from "../../crds/trainingjob.js";
import {
  type ControllerDefinition,
  controller,
  type DeclaredRule,
  type KubeObject,
  type ResourceDescriptor,
} from "../../runtime/index.js";
import type { ControllerDeps } from "../controller-factory.js";
import { reasonEvents } from "../event-reasons.js";
import { isPaused } from "../managed/decisions.js";
import { ENDPOINT_SLICES, JOB_LABEL, SERVICES } from "./expose.js";
import { applyExposure, exposureChanges, exposureInSync } from "./expose-sync.js";
import type { TrainingJobObject } from "./objects.js";

/** The Services the operator labels with a job (the only ones it caches). */
export const EXPOSED_SERVICES: ResourceDescriptor = { ...SERVICES, labelSelector: JOB_LABEL };
/** The EndpointSlices the operator labels with a job (the only ones it caches). */
export const EXPOSED_SLICES: ResourceDescriptor = {
  ...ENDPOINT_SLICES,
  labelSelector: JOB_LABEL,
};

/** Index of the exposure objects by `namespace/job name` (their job label). */
const BY_JOB = "byTrainingJob";

function byJob(o: KubeObject): string[] {
  const job = o.metadata?.labels?.[JOB_LABEL];
  return job ? [`${o.metadata?.namespace ?? ""}/${job}`] : [];
}

/** The rules of the exposure controller (declared only when exposure is enabled). */
export const EXPOSURE_PERMISSIONS: readonly DeclaredRule[] = [
  {
    apiGroups: [trainingJobCrd.group],
    resources: [trainingJobCrd.plural],
    verbs: ["get", "list", "watch"],
    reason: "watch the TrainingJobs whose open ports it exposes",
  },
  {
    apiGroups: [SERVICES.group],
    resources: [SERVICES.plural],
    verbs: ["list", "watch", "create", "patch", "delete"],
    reason: "a Service for each exposed pod port (spec.exposePorts), cached and watched",
  },
  {
    apiGroups: [ENDPOINT_SLICES.group],
    resources: [ENDPOINT_SLICES.plural],
    verbs: ["list", "watch", "create", "patch", "delete"],
    reason: "the EndpointSlice of each exposed port's Service, cached and watched",
  },
];

/** Reason of the Normal event that says what the controller changed. */
export const EXPOSURE_UPDATED = "ExposureUpdated";

/**
 * The exposure controller (a ControllerFactory: src/controllers/index.ts registers it)
 * when `trainingJob.exposure.enabled`, else none (no Service or EndpointSlice is read or
 * written, and no rule granted). `trainingJob.exposure.allowedCidrs` are the ranges an
 * open port's external address must lie in (none: nothing is exposed, and the
 * TrainingJob controller says `ExposureAddressRefused`).
 */
export function trainingJobExposureController(
  deps: ControllerDeps,
): ControllerDefinition | undefined {
  const { enabled, allowedCidrs } = deps.config.trainingJob.exposure;
  if (!enabled) return undefined;
  const addresses = new AddressAllowList(allowedCidrs);
  return controller("trainingjob-exposure")
    .for(trainingJobCrd, { statusChanges: true })
    .owns(EXPOSED_SERVICES)
    .owns(EXPOSED_SLICES)
    .index(EXPOSED_SERVICES, BY_JOB, byJob)
    .index(EXPOSED_SLICES, BY_JOB, byJob)
    .permissions(EXPOSURE_PERMISSIONS)
    .reconcile(async (key, ctx) => {
      const job = ctx.cache.get<TrainingJobObject>(trainingJobCrd, key);
      // A deleted job's objects go with it (ownerReferences: garbage collection); a
      // paused job's stay as they are until it is resumed (decisions.ts).
      if (!job || job.metadata?.deletionTimestamp || isPaused(job)) return {};
      const uid = job.metadata?.uid;
      const owned = (res: ResourceDescriptor) =>
        ctx.cache
          .byIndex(res, BY_JOB, `${key.namespace}/${key.name}`)
          .filter((o) =>
            (o.metadata?.ownerReferences ?? []).some((r) => (r as { uid?: string }).uid === uid),
          );
      const changes = exposureChanges(
        job,
        job.status?.pods ?? [],
        { services: owned(EXPOSED_SERVICES), slices: owned(EXPOSED_SLICES) },
        addresses,
      );
      if (exposureInSync(changes)) return {};
      const summary = await applyExposure(ctx.kube, job, changes);
      if (summary) reasonEvents(ctx.events).normal(job, EXPOSURE_UPDATED, summary);
      return {};
    });
}
