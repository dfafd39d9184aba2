import type { Logger } from "pino";
import type { OperatorConfig } from "../config/schema.js";
import type { ControllerDefinition } from "../runtime/controller.js";
import type { ServiceClient } from "../service/client.js";
import type { ObjectStorageSettings } from "../service/object-storage.js";
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
   * The service client: each call goes to the account of the object whose reconcile
   * makes it (its ServiceConnection, else the default connection), with that
   * connection's rate limit and metrics label (connections/registry.ts).
   */
  service: ServiceClient;
  /**
   * The connections of the process, for kinds that need more than `service`: e.g.
   * `connections.forObject(obj).objectStorage` (S3 endpoint and credentials). Absent
   * where a caller builds controllers without connections (some tests): every object
   * then uses `service`.
   */
  connections?: ServiceConnections;
  /** The root logger; reconciles get their own child in `ctx.log`. */
  log: Logger;
  /**
   * The default connection's object storage (the operator's `objectStorage` config),
   * for objects whose connection is the default one; absent when not configured.
   */
  defaultObjectStorage?: ObjectStorageSettings;
}

/**
 * Builds one controller from the process's dependencies, or none when the controller
 * is off in this configuration (an optional feature, e.g. TrainingJob exposure).
 */
export type ControllerFactory = (deps: ControllerDeps) => ControllerDefinition | undefined;
