import { blockVolumeController } from "./blockvolume/controller.js";
import { bucketController } from "./bucket/controller.js";
import { catalogMirrorController } from "./catalog/controller.js";
import { cciInstanceController } from "./cciinstance/controller.js";
import { serviceConnectionController } from "./connections/controller.js";
import type { ControllerFactory } from "./controller-factory.js";
import { fileSystemController } from "./filesystem/controller.js";
import { nasVolumeController } from "./nasvolume/controller.js";
import { trainingJobController } from "./trainingjob/controller.js";
import { trainingJobExposureController } from "./trainingjob/exposure-controller.js";
import { trainingTemplateController } from "./trainingtemplate/controller.js";

export type { ControllerDeps, ControllerFactory } from "./controller-factory.js";

/**
 * The registry of controllers that `aidc-operator run` starts. Each kind's controller
 * adds itself here (one line per controller, e.g. `nasVolumeController`), from the kind
 * folder's `controller.ts`, one shape for all: a `ControllerFactory`,
 * `xController(deps, options?)` (controller-factory.ts); a managed kind's is declared
 * with `managedController` (./managed/managed-controller.ts), CciInstance's
 * (observe-only), the connections' and the catalog mirror's with
 * `controller(name).for(KIND)...reconcile(fn)` from src/runtime/controller.ts.
 */
export const controllers: ControllerFactory[] = [
  cciInstanceController,
  nasVolumeController,
  trainingJobController,
  trainingJobExposureController,
  trainingTemplateController,
  bucketController,
  fileSystemController,
  serviceConnectionController,
  blockVolumeController,
  catalogMirrorController,
];
