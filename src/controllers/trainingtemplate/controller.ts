/**
 * The TrainingTemplate controller: the generic managed reconciler (../managed, declared
 * with `managedController`) with the template ExternalClient (external.ts) and its
 * reference resolution (references.ts). NasVolumes and TrainingJobs are watched so a
 * template waiting for a storage id or a task id is reconciled when it appears.
 */
import { nasVolumeCrd } from "../../crds/nasvolume.js";
import { trainingJobCrd } from "../../crds/trainingjob.js";
import {
  type TrainingTemplate as TrainingTemplateObject,
  type TrainingTemplateStatus,
  trainingTemplateCrd,
} from "../../crds/trainingtemplate.js";
import { referrersByIndex } from "../../runtime/cache.js";
import type { ControllerDefinition } from "../../runtime/controller.js";
import { capValue } from "../../runtime/object-writes.js";
import type { TrainingTemplate } from "../../service/schemas/template.js";
import type { ControllerDeps } from "../controller-factory.js";
import type { ManagedFacts } from "../managed/call.js";
import type { ManagedKind } from "../managed/external-client.js";
import { managedController, managedLoopOptions } from "../managed/managed-controller.js";
import { configStatus } from "../trainingjob/remote.js";
import { APPLIED_ANNOTATION, readApplied } from "./decisions.js";
import { TemplateExternalClient } from "./external.js";
import {
  resolveTemplateReferences,
  TEMPLATE_REFERENCE_INDEX,
  type TemplateRefs,
  templateFromJobKeys,
  templateNasVolumeRefKeys,
} from "./references.js";

/** The finalizer of TrainingTemplates. */
export const TEMPLATE_FINALIZER = "aidc.io/trainingtemplate";

/** The TrainingTemplate status (without conditions). */
export function templateStatus(
  obj: TrainingTemplateObject,
  facts: ManagedFacts,
  remote: TrainingTemplate | undefined,
): TrainingTemplateStatus {
  const applied = readApplied(obj.metadata.annotations?.[APPLIED_ANNOTATION]);
  const out: TrainingTemplateStatus = {};
  if (facts.externalId) out.templateId = facts.externalId;
  const name = remote?.name ?? obj.status?.templateName;
  if (name) out.templateName = capValue(name);
  if (applied?.sourceTaskId) out.sourceTaskId = applied.sourceTaskId;
  if (applied) out.lastAppliedTime = applied.at;
  const config = remote ? configStatus(remote) : obj.status?.config;
  if (config && Object.keys(config).length > 0) out.config = config;
  return out;
}

/** Tunables beyond the operator config (tests shorten them). */
export interface TrainingTemplateControllerOptions {
  /** How long a new template may be missing from the list after a create. Default: `service.listVisibilityWindowMs`. */
  visibilityGraceMs?: number;
}

/**
 * The TrainingTemplate controller, with `options` beyond the operator config (a
 * ControllerFactory: src/controllers/index.ts registers it).
 */
export function trainingTemplateController(
  deps: ControllerDeps,
  options: TrainingTemplateControllerOptions = {},
): ControllerDefinition {
  const kind: ManagedKind<TrainingTemplateObject, TrainingTemplate, TemplateRefs> = {
    resource: trainingTemplateCrd,
    finalizer: TEMPLATE_FINALIZER,
    connect: (conn) => new TemplateExternalClient(conn.service, deps.config.adoption.namespaces),
    resolveReferences: resolveTemplateReferences,
    status: (obj, facts, remote) => templateStatus(obj, facts, remote) as Record<string, unknown>,
    statusId: (obj) => obj.status?.templateId,
    // No fixedFields: the service's update replaces every field of a template, so an
    // adopted template is sent the spec's body (docs/controllers.md, TrainingTemplate).
  };
  return managedController(kind, {
    connections: deps.connections,
    loop: managedLoopOptions(deps.config, "TrainingTemplate", options.visibilityGraceMs),
    indexes: [
      {
        name: TEMPLATE_REFERENCE_INDEX.nasVolume,
        fn: (o) => templateNasVolumeRefKeys(o as unknown as TrainingTemplateObject),
      },
      {
        name: TEMPLATE_REFERENCE_INDEX.trainingJob,
        fn: (o) => templateFromJobKeys(o as unknown as TrainingTemplateObject),
      },
    ],
    references: {
      watches: [
        {
          resource: nasVolumeCrd,
          map: referrersByIndex(trainingTemplateCrd, TEMPLATE_REFERENCE_INDEX.nasVolume),
        },
        {
          resource: trainingJobCrd,
          map: referrersByIndex(trainingTemplateCrd, TEMPLATE_REFERENCE_INDEX.trainingJob),
        },
      ],
      reason: "read the NasVolumes and TrainingJobs a template refers to",
    },
  });
}
