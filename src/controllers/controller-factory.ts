import type { Logger } from "pino";
import type { OperatorConfig } from "../config/schema.js";
import type { ControllerDefinition } from "../runtime/controller.js";
import type { ServiceClient } from "../service/client.js";

/**
 * The shape of a controller factory: what `aidc-operator run` hands each one, and what
 * it returns. The kinds implement it and the registry (./index.ts) lists them; it lives
 * apart from the registry so that the kinds need not import the registry that imports
 * them.
 */

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
