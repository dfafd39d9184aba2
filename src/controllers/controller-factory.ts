import type { Logger } from "pino";
import type { OperatorConfig } from "../config/schema.js";
import type { ControllerDefinition } from "../runtime/controller.js";
import type { ServiceConnections } from "./connections/registry.js";

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
  /**
   * The service connections of the process: `connections.forObject(obj)` is the account
   * of an object (its ServiceConnection, else the default connection), with its own
   * service client, rate limit, metrics label and object storage
   * (connections/registry.ts). Managed kinds get it through `ManagedKind.connect`.
   */
  connections: ServiceConnections;
  /** The root logger; reconciles get their own child in `ctx.log`. */
  log: Logger;
}

/**
 * Builds one controller from the process's dependencies, or none when the controller
 * is off in this configuration (an optional feature, e.g. TrainingJob exposure). Every
 * controller has this one shape, `xController(deps, options?)`: it reads what it needs
 * from `deps` (poll interval, adoption, its settings of the config), and `options`, when
 * it has any, are only the tunables tests shorten (e.g. `visibilityGraceMs`).
 */
export type ControllerFactory = (deps: ControllerDeps) => ControllerDefinition | undefined;
