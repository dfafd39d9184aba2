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
import { bucketCrd } from "../../crds/bucket.js";
import { nasVolumeCrd } from "../../crds/nasvolume.js";
import { trainingJobCrd } from "../../crds/trainingjob.js";
import { trainingProductCrd } from "../../crds/trainingproduct.js";
import { trainingTemplateCrd } from "../../crds/trainingtemplate.js";
import { type ControllerDefinition, referrersByIndex } from "../../runtime/index.js";
import { productAppearedWatch } from "../catalog/refused-objects.js";
import type { ControllerDeps } from "../controller-factory.js";
import { perAccount } from "../managed/account-memory.js";
import type { ManagedKind } from "../managed/external-client.js";
import { managedController, managedLoopOptions } from "../managed/managed-controller.js";
import { trainingJobClient } from "./external.js";
import { taskFixedFields } from "./fixed-fields.js";
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

/** The finalizer of TrainingJobs. */
export const TRAINING_JOB_FINALIZER = "aidc.io/trainingjob";

/** Tunables of the TrainingJob controller beyond the operator config (tests shorten them). */
export interface TrainingJobControllerOptions {
  /** First poll of a pending subscription (doubles with its age). Default: the loop's. */
  subscriptionPollMs?: number;
  /** How long a new task may be missing from the task list after a create. Default: `service.listVisibilityWindowMs`. */
  visibilityGraceMs?: number;
}

/**
 * The TrainingJob controller, with `options` beyond the operator config (a
 * ControllerFactory: src/controllers/index.ts registers it): its poll interval, status
 * classes (`trainingJob.statusClasses`), exposure (`trainingJob.exposure`: when enabled,
 * ports name their Service in status; else a job asking for it is refused
 * `ExposureDisabled`) and `adoption.namespaces` come from the config.
 */
export function trainingJobController(
  deps: ControllerDeps,
  options: TrainingJobControllerOptions = {},
): ControllerDefinition {
  const { config } = deps;
  const { statusClasses } = config.trainingJob;
  const exposure = config.trainingJob.exposure.enabled;
  const addresses = new AddressAllowList(config.trainingJob.exposure.allowedCidrs);
  const adoptionNamespaces = config.adoption.namespaces;
  const clientOptions = {
    ...(statusClasses ? { statusClasses } : {}),
    exposure,
    exposureAddresses: addresses,
    adoptionNamespaces,
  };
  const fullReads = perAccount(() => new FullReads(DEFAULT_FULL_READ_INTERVAL_MS));
  const kind: ManagedKind<TrainingJobObject, TrainingJobRemote, TrainingJobRefs> = {
    resource: trainingJobCrd,
    exportValues: (_obj, status) => trainingJobExport(status),
    finalizer: TRAINING_JOB_FINALIZER,
    connect: (conn) =>
      trainingJobClient(conn.service, {
        ...clientOptions,
        connection: conn.name,
        fullReads: fullReads(conn),
      }),
    resolveReferences: resolveJobReferences,
    // A task's references were used at its creation and cannot change.
    referencesForCreateOnly: true,
    status: (obj, facts, remote) =>
      trainingJobStatus(obj, facts, remote, statusClasses, exposure ? addresses : undefined),
    statusId: (obj) => obj.status?.taskId,
    fixedFields: taskFixedFields,
    factFields: TRAINING_JOB_FACT_FIELDS,
    conditions: (_call, ready, remote) => {
      const pods = podsObservedCondition(remote);
      return [...succeededCondition(ready), ...(pods ? [pods] : [])];
    },
  };
  return managedController(kind, {
    connections: deps.connections,
    loop: {
      ...managedLoopOptions(config, "TrainingJob", options.visibilityGraceMs),
      ...(options.subscriptionPollMs ? { subscriptionPollMs: options.subscriptionPollMs } : {}),
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
        {
          resource: nasVolumeCrd,
          map: referrersByIndex(trainingJobCrd, REFERENCE_INDEX.nasVolume),
        },
        { resource: bucketCrd, map: referrersByIndex(trainingJobCrd, REFERENCE_INDEX.bucket) },
        {
          resource: trainingTemplateCrd,
          map: referrersByIndex(trainingJobCrd, REFERENCE_INDEX.template),
        },
        {
          resource: trainingJobCrd,
          map: referrersByIndex(trainingJobCrd, REFERENCE_INDEX.trainingJob),
        },
        productAppearedWatch(deps.connections, trainingJobCrd, trainingProductCrd),
      ],
      reason:
        "read the NasVolumes, Buckets and TrainingTemplates a job refers to, and the TrainingProducts, to try a job refused for its code again when it appears",
    },
  });
}
