/**
 * The kinds a TrainingJob reconcile reads, as Kubernetes objects (the crds' types plus
 * the runtime's object shape, so they go through the cache and the managed loop).
 */
import type { NasVolume } from "../../crds/nasvolume.js";
import type { TrainingJob } from "../../crds/trainingjob.js";
import type { TrainingTemplate } from "../../crds/trainingtemplate.js";
import type { KubeObject } from "../../runtime/resource.js";

/** A TrainingJob object. */
export type TrainingJobObject = TrainingJob & KubeObject;
/** A NasVolume object. */
export type NasVolumeObject = NasVolume & KubeObject;
/** A TrainingTemplate object. */
export type TrainingTemplateObject = TrainingTemplate & KubeObject;
