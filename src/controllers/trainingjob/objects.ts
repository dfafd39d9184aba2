/**
 * The kinds a TrainingJob reconcile reads, as Kubernetes objects (the crds' types plus
 * the runtime's object shape, so they go through the cache and the managed loop), and
 * the remote record of a job as the loop hands it on.
 */
import type { NasVolume } from "../../crds/nasvolume.js";
import type { TrainingJob } from "../../crds/trainingjob.js";
import type { TrainingTemplate } from "../../crds/trainingtemplate.js";
import type { KubeObject } from "../../runtime/resource.js";
import type { PortAction } from "./ports.js";
import type { remoteStatus, TaskObservation } from "./remote.js";

/** A TrainingJob object. */
export type TrainingJobObject = TrainingJob & KubeObject;
/** A NasVolume object. */
export type NasVolumeObject = NasVolume & KubeObject;
/** A TrainingTemplate object. */
export type TrainingTemplateObject = TrainingTemplate & KubeObject;

/** The remote record the loop hands from observe to update and status. */
export interface TrainingJobRemote {
  observation: TaskObservation;
  /** The remote part of the status. */
  status: ReturnType<typeof remoteStatus>;
  /** The description differs from the spec's. */
  descriptionDiffers: boolean;
  /** Port changes that make the pods' custom ports match spec.ports. */
  ports: PortAction[];
  /**
   * Open ports `spec.exposePorts` asks to expose whose external address lies outside
   * the allowed ranges (they get no Service: see `refusedExposure` in expose-sync.ts).
   */
  exposureRefused: string[];
}
