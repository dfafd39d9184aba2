/**
 * The TrainingJob controller: resolves references (NasVolumes, a TrainingTemplate, a
 * source TrainingJob), preflights the product, creates the task through the generic
 * managed reconciler's crash-safe protocol, mirrors the task, its storages, pods and
 * ports into status, and applies description and port changes; declared with
 * `managedController`. The optional exposure Services and EndpointSlices are the
 * exposure controller's (exposure-controller.ts), which reads the ports this one writes. Decisions
 * are documented in docs/controllers.md.
 */
import { AddressAllowList } from "../../config/cidr.js";
import { pollIntervalFor } from "../../config/schema.js";
import { bucketCrd } from "../../crds/bucket.js";
import { nasVolumeCrd } from "../../crds/nasvolume.js";
import { trainingJobCrd } from "../../crds/trainingjob.js";
import { trainingTemplateCrd } from "../../crds/trainingtemplate.js";
import {
  type CacheReader,
  type ControllerDefinition,
  type KubeObject,
  type ObjectKey,
  parseKey,
} from "../../runtime/index.js";
import type { ConnectionSource } from "../connections/registry.js";
import type { ControllerFactory } from "../controller-factory.js";
import { perAccount } from "../managed/account-memory.js";
import type { ManagedKind } from "../managed/external-client.js";
import { managedController } from "../managed/managed-controller.js";
import { trainingJobClient } from "./external.js";
import { DEFAULT_FULL_READ_INTERVAL_MS, FullReads } from "./listed-task.js";
import type { TrainingJobObject, TrainingJobRemote } from "./objects.js";
import {
  bucketRefKeys,
  copyFromKeys,
  nasVolumeRefKeys,
  REFERENCE_INDEX,
  resolveJobReferences,
  type TrainingJobRefs,
  templateRefKeys,
} from "./references.js";
import {
  podsObservedCondition,
  succeededCondition,
  TRAINING_JOB_FACT_FIELDS,
  trainingJobExport,
  trainingJobStatus,
} from "./status.js";
import type { TaskStatusTable } from "./status-class.js";

/** The finalizer of TrainingJobs. */
export const TRAINING_JOB_FINALIZER = "aidc.io/trainingjob";

/** What the controller is built with. */
export interface TrainingJobControllerOptions {
  /** Where each job's account is found (`ControllerDeps.connections`). */
  connections: ConnectionSource;
  /** Poll interval of a task. */
  pollIntervalMs: number;
  /** First poll of a pending subscription (doubles with its age). */
  subscriptionPollMs?: number;
  /** How long a new task may be missing from the task list after a create (`service.listVisibilityWindowMs`). */
  visibilityGraceMs?: number;
  /** Remote status words → class, over DEFAULT_TASK_STATUS_TABLE. */
  statusClasses?: TaskStatusTable;
  /**
   * `spec.exposePorts` is honoured (by the exposure controller, which the registry
   * starts then): ports name their Service in status. Default false: a job asking for
   * it is refused `ExposureDisabled`.
   */
  exposure?: boolean;
  /**
   * The ranges an open port's external address must lie in to be exposed
   * (`trainingJob.exposure.allowedCidrs`). Default none: every address is refused.
   */
  exposureCidrs?: readonly string[];
  /** `adoption.namespaces` of the operator config (managed/tenancy.ts); default none. */
  adoptionNamespaces?: readonly string[];
}

/** The TrainingJobs whose index `index` lists `obj`. */
function referencing(index: string) {
  return (obj: KubeObject, cache: CacheReader): ObjectKey[] =>
    cache
      .byIndex<TrainingJobObject>(
        trainingJobCrd,
        index,
        `${obj.metadata?.namespace}/${obj.metadata?.name}`,
      )
      .map((j) => parseKey(`${j.metadata?.namespace}/${j.metadata?.name}`));
}

/** Builds the TrainingJob controller. */
export function trainingJobControllerFrom(
  options: TrainingJobControllerOptions,
): ControllerDefinition {
  const addresses = new AddressAllowList(options.exposureCidrs ?? []);
  const clientOptions = {
    ...(options.statusClasses ? { statusClasses: options.statusClasses } : {}),
    exposure: options.exposure === true,
    exposureAddresses: addresses,
    adoptionNamespaces: options.adoptionNamespaces ?? [],
  };
  const fullReads = perAccount(() => new FullReads(DEFAULT_FULL_READ_INTERVAL_MS));
  const kind: ManagedKind<TrainingJobObject, TrainingJobRemote, TrainingJobRefs> = {
    resource: trainingJobCrd,
    exportValues: (_obj, status) => trainingJobExport(status),
    finalizer: TRAINING_JOB_FINALIZER,
    connect: (conn) =>
      trainingJobClient(conn.service, { ...clientOptions, fullReads: fullReads(conn) }),
    resolveReferences: resolveJobReferences,
    // A task's references were used at its creation and cannot change.
    referencesForCreateOnly: true,
    status: (obj, facts, remote) =>
      trainingJobStatus(
        obj,
        facts,
        remote,
        options.statusClasses,
        options.exposure === true ? addresses : undefined,
      ),
    statusId: (obj) => obj.status?.taskId,
    factFields: TRAINING_JOB_FACT_FIELDS,
    conditions: (_call, ready, remote) => {
      const pods = podsObservedCondition(remote);
      return [...succeededCondition(ready), ...(pods ? [pods] : [])];
    },
  };
  return managedController(kind, {
    connections: options.connections,
    loop: {
      pollIntervalMs: options.pollIntervalMs,
      ...(options.subscriptionPollMs ? { subscriptionPollMs: options.subscriptionPollMs } : {}),
      ...(options.visibilityGraceMs ? { visibilityGraceMs: options.visibilityGraceMs } : {}),
      adoptionNamespaces: options.adoptionNamespaces ?? [],
    },
    indexes: [
      {
        name: REFERENCE_INDEX.nasVolume,
        fn: (o) => nasVolumeRefKeys(o as TrainingJobObject),
      },
      { name: REFERENCE_INDEX.bucket, fn: (o) => bucketRefKeys(o as TrainingJobObject) },
      { name: REFERENCE_INDEX.template, fn: (o) => templateRefKeys(o as TrainingJobObject) },
      { name: REFERENCE_INDEX.trainingJob, fn: (o) => copyFromKeys(o as TrainingJobObject) },
    ],
    references: {
      watches: [
        { resource: nasVolumeCrd, map: referencing(REFERENCE_INDEX.nasVolume) },
        { resource: bucketCrd, map: referencing(REFERENCE_INDEX.bucket) },
        { resource: trainingTemplateCrd, map: referencing(REFERENCE_INDEX.template) },
        { resource: trainingJobCrd, map: referencing(REFERENCE_INDEX.trainingJob) },
      ],
      reason: "read the NasVolumes, Buckets and TrainingTemplates a job refers to",
    },
  });
}

/** The registry factory: the connections, the TrainingJob poll interval, status classes and exposure. */
export const trainingJobController: ControllerFactory = ({ config, connections }) =>
  trainingJobControllerFrom({
    connections,
    pollIntervalMs: pollIntervalFor(config, "TrainingJob"),
    visibilityGraceMs: config.service.listVisibilityWindowMs,
    statusClasses: config.trainingJob.statusClasses,
    exposure: config.trainingJob.exposure.enabled,
    exposureCidrs: config.trainingJob.exposure.allowedCidrs,
    adoptionNamespaces: config.adoption.namespaces,
  });
