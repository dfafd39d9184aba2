/**
 * The TrainingTemplate controller: the generic managed reconciler (../managed) with the
 * template ExternalClient (external.ts). NasVolumes and TrainingJobs are watched so a
 * template waiting for a storage id or a task id is reconciled when it appears.
 */
import { pollIntervalFor } from "../../config/schema.js";
import { nasVolumeCrd } from "../../crds/nasvolume.js";
import { trainingJobCrd } from "../../crds/trainingjob.js";
import {
  type TrainingTemplate as TrainingTemplateObject,
  type TrainingTemplateStatus,
  trainingTemplateCrd,
} from "../../crds/trainingtemplate.js";
import type { CacheReader } from "../../runtime/cache.js";
import { controller } from "../../runtime/controller.js";
import type { KubeObject, ObjectKey } from "../../runtime/resource.js";
import type { TrainingTemplate } from "../../service/schemas/template.js";
import type { ControllerFactory } from "../controller-factory.js";
import { boundIdIndex } from "../managed/binding.js";
import type { ManagedFacts, ManagedKind } from "../managed/external-client.js";
import { managedPermissions, managedReconciler } from "../managed/reconciler.js";
import { BOUND_ID_INDEX } from "../managed/tenancy.js";
import { APPLIED_ANNOTATION, readApplied } from "./decisions.js";
import { TemplateExternalClient } from "./external.js";

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
  if (name) out.templateName = name;
  if (applied?.sourceTaskId) out.sourceTaskId = applied.sourceTaskId;
  if (applied) out.lastAppliedTime = applied.at;
  return out;
}

/** Templates in `obj`'s namespace whose spec names it through `refers`. */
function referrers(
  obj: KubeObject,
  cache: CacheReader,
  refers: (t: TrainingTemplateObject, name: string) => boolean,
): ObjectKey[] {
  const namespace = obj.metadata?.namespace ?? "";
  const name = obj.metadata?.name ?? "";
  return cache
    .list(trainingTemplateCrd, namespace)
    .map((t) => t as unknown as TrainingTemplateObject)
    .filter((t) => refers(t, name))
    .map((t) => ({ namespace, name: t.metadata.name ?? "" }));
}

/** Tunables beyond the operator config (tests shorten them). */
export interface TrainingTemplateControllerOptions {
  /** How long a new template may be missing from the list after a create. Default: `service.listVisibilityWindowMs`. */
  visibilityGraceMs?: number;
}

/** A TrainingTemplate controller factory with `options`. */
export function trainingTemplateControllerWith(
  options: TrainingTemplateControllerOptions = {},
): ControllerFactory {
  return (deps) => {
    const poll = pollIntervalFor(deps.config, "TrainingTemplate");
    const kind: ManagedKind<TrainingTemplateObject, TrainingTemplate> = {
      resource: trainingTemplateCrd,
      finalizer: TEMPLATE_FINALIZER,
      client: new TemplateExternalClient(deps.service, deps.config.adoption.namespaces),
      status: (obj, facts, remote) => templateStatus(obj, facts, remote) as Record<string, unknown>,
      statusId: (obj) => obj.status?.templateId,
    };
    const { reconcile, onError, settled } = managedReconciler(kind, {
      pollIntervalMs: poll,
      subscriptionPollMs: Math.min(1_000, poll),
      visibilityGraceMs: options.visibilityGraceMs ?? deps.config.service.listVisibilityWindowMs,
      adoptionNamespaces: deps.config.adoption.namespaces,
    });
    return controller("trainingtemplate")
      .for(trainingTemplateCrd)
      .index(trainingTemplateCrd, BOUND_ID_INDEX, boundIdIndex(kind))
      .watches(nasVolumeCrd, (nas, cache) =>
        referrers(nas, cache, (t, name) =>
          (t.spec.storage ?? []).some((m) => m.nasVolumeRef?.name === name),
        ),
      )
      .watches(trainingJobCrd, (job, cache) =>
        referrers(job, cache, (t, name) => t.spec.fromTrainingJobRef?.name === name),
      )
      .permissions([
        ...managedPermissions(trainingTemplateCrd),
        {
          apiGroups: [nasVolumeCrd.group],
          resources: [nasVolumeCrd.plural, trainingJobCrd.plural],
          verbs: ["get", "list", "watch"],
          reason: "read the NasVolumes and TrainingJobs a template refers to",
        },
      ])
      .onError(onError)
      .settled(settled)
      .reconcile(reconcile);
  };
}

/** The TrainingTemplate controller factory (registered in src/controllers/index.ts). */
export const trainingTemplateController: ControllerFactory = trainingTemplateControllerWith();
