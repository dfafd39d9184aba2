import type { Logger } from "pino";
import { type OperatorConfig, pollIntervalFor } from "../config/schema.js";
import type { ControllerDefinition } from "../runtime/controller.js";
import type { ServiceClient } from "../service/client.js";
import { cciInstanceController } from "./cciinstance/index.js";
import { nasVolumeController } from "./nasvolume/controller.js";
import { trainingJobController } from "./trainingjob/index.js";
import { trainingTemplateController } from "./trainingtemplate/controller.js";

/** What `aidc-operator run` hands every controller factory. */
export interface ControllerDeps {
  /** The validated operator config (poll intervals: `pollIntervalFor(config, kind)`). */
  config: OperatorConfig;
  /** The one service client of the process (one rate limit, metrics wired in). */
  service: ServiceClient;
  /** The root logger; reconciles get their own child in `ctx.log`. */
  log: Logger;
}

/** Builds one controller from the process's dependencies. */
export type ControllerFactory = (deps: ControllerDeps) => ControllerDefinition;

/**
 * The registry of controllers that `aidc-operator run` starts. Each kind's controller
 * adds its factory here (one line per controller, e.g. `nasVolumeController`), built
 * with `controller(name).for(KIND)...reconcile(fn)` from src/runtime/controller.ts.
 */
export const controllers: ControllerFactory[] = [
  ({ config, service }) =>
    cciInstanceController({
      service,
      pollIntervalMs: pollIntervalFor(config, "CciInstance"),
      adoptionNamespaces: config.adoption.namespaces,
    }),
  nasVolumeController,
  trainingJobController,
  trainingTemplateController,
];
