/**
 * The TrainingTemplate's remote resource behind the generic managed reconciler: a
 * training template of the service. The create answers no id, so the id is found in
 * the template list by the template's exact name (which is also how an interrupted
 * create is found again: no client token), and the owner mark is in its env and its
 * description (a list may leave env out: withOwnerInDesc). A spec
 * change sends the full body (updateTemplate), and so does a change made outside the
 * cluster that the template list shows (templateDrift); `fromTrainingJobRef` saves the
 * job's task as the template once (saveAsTemplate) and is never updated.
 */
import {
  TRAINING_TEMPLATE_REASONS,
  type TrainingTemplate as TrainingTemplateObject,
} from "../../crds/trainingtemplate.js";
import { rfc3339 } from "../../runtime/resource.js";
import type { AccountCalls } from "../../service/account.js";
import {
  OWNER_MARK_ENV,
  ownerMarkInDescription,
  withOwnerMarker,
} from "../../service/schemas/create.js";
import type { TrainingTemplate } from "../../service/schemas/template.js";
import { terminalError } from "../event-reasons.js";
import type {
  CreateResult,
  DeleteResult,
  ListedObservation,
  LookupKey,
  ManagedCall,
  Observation,
  OwnerMark,
  PreflightRefusal,
  ResolvedCall,
  UnreadMark,
  UpdateResult,
} from "../managed/call.js";
import { listedObservation } from "../managed/call.js";
import { createMayHaveHappened } from "../managed/create-recovery.js";
import { ANNOTATIONS } from "../managed/decisions.js";
import { absenceVerdict, type KindClient, type TokenAbsence } from "../managed/external-client.js";
import {
  BINDING_REFUSALS,
  formatOwnerMark,
  ownerMark,
  parseOwnerMark,
  rawMountRefusal,
} from "../managed/tenancy.js";
import {
  APPLIED_ANNOTATION,
  type AppliedRecord,
  type BodyResult,
  bodyHash,
  needsUpdate,
  readApplied,
  templateDrift,
  templateInput,
  templateName,
  withOwnerInDesc,
} from "./decisions.js";
import type { TemplateRefs } from "./references.js";

type Call = ManagedCall<TrainingTemplateObject, TemplateRefs>;

/** The owner mark the object's template carries, as text. */
const ownMark = (call: Call) =>
  formatOwnerMark(ownerMark(call.obj.metadata.namespace ?? "", call.obj.metadata.name ?? ""));

/**
 * The template body, or why not: a raw `storageId` mount of a storage that is not the
 * namespace's own where adoption is not allowed. Undefined while the references do not
 * resolve (the loop then neither creates nor updates).
 */
function body(call: Call, adoption: readonly string[]): BodyResult | undefined {
  const refs = call.refs;
  if (!refs) return undefined;
  const ns = call.obj.metadata.namespace ?? "";
  const raw = (call.obj.spec.storage ?? []).flatMap((m) =>
    m.nasVolumeRef === undefined && m.storageId ? [m.storageId] : [],
  );
  const refusal =
    raw.length > 0 ? rawMountRefusal(ns, raw, refs.ownStorageIds(), adoption) : undefined;
  if (refusal) return { ok: false, ...refusal };
  return templateInput(call.obj, (name) => refs.nasVolumes.get(name));
}

/** The ExternalClient of TrainingTemplate. */
export class TemplateExternalClient
  implements KindClient<TrainingTemplateObject, TrainingTemplate, TemplateRefs>
{
  constructor(
    private readonly service: AccountCalls,
    private readonly adoption: readonly string[] = [],
  ) {}

  /**
   * The mark in the env, else in the description (a list without env); unread when the
   * list shows neither (a template has no detail).
   */
  ownerOf(remote: TrainingTemplate): OwnerMark | UnreadMark | undefined {
    const text = remote.env?.[OWNER_MARK_ENV] ?? ownerMarkInDescription(remote.desc);
    if (text === undefined && remote.env === undefined) return { unread: "env" };
    return parseOwnerMark(text);
  }

  async preflight(
    call: ResolvedCall<TrainingTemplateObject, TemplateRefs>,
  ): Promise<PreflightRefusal | undefined> {
    if (!call.refs.sourceTaskId) {
      const b = body(call, this.adoption);
      if (b && !b.ok) return { reason: b.reason, message: b.message };
    }
    const taken = await this.idsNamed(templateName(call.obj));
    if (taken.length > 0) {
      return {
        reason: TRAINING_TEMPLATE_REASONS.names.NameTakenRefused,
        message: `a template named ${templateName(call.obj)} already exists in the service (${taken.join(", ")}); template names identify templates, so pick another name, bind this object to it with the annotation ${ANNOTATIONS.externalId}, or delete that template (checked again every poll)`,
        // A template deleted outside the cluster frees the name: seen at a poll.
        retry: true,
      };
    }
    return undefined;
  }

  /**
   * The body's hash, written with the pending marker: a template found by name after a
   * lost answer (or a crash) carries this body, so no update follows.
   */
  pendingAnnotations(
    call: ResolvedCall<TrainingTemplateObject, TemplateRefs>,
  ): Record<string, string> {
    const b = call.refs.sourceTaskId ? undefined : body(call, this.adoption);
    if (!b?.ok) return {};
    const applied = { hash: bodyHash(b.input), at: rfc3339(call.now()) };
    return { [APPLIED_ANNOTATION]: JSON.stringify(applied) };
  }

  /** The template list finds the new template's id and observes it: without it, no create. */
  requireOperations(): Promise<void> {
    return this.service.requireOperations(["listTemplates"], "a template create");
  }

  async create(call: ResolvedCall<TrainingTemplateObject, TemplateRefs>): Promise<CreateResult> {
    const name = templateName(call.obj);
    const taskId = call.refs.sourceTaskId;
    const at = rfc3339(call.now());
    if (taskId) {
      await this.service.tasks.saveAsTemplate(taskId, {
        name,
        desc: withOwnerMarker(call.obj.spec.description, ownMark(call)),
      });
      const applied: AppliedRecord = { hash: "", at, sourceTaskId: taskId };
      await call.annotate({ [APPLIED_ANNOTATION]: JSON.stringify(applied) });
    } else {
      const b = body(call, this.adoption);
      if (!b?.ok) {
        throw terminalError(
          b?.reason ?? "ReconcileError",
          b?.message ?? "the template body cannot be built",
        );
      }
      // The body was recorded with the pending marker (pendingAnnotations); dropped if
      // the create did not act.
      try {
        await this.service.templates.create(withOwnerInDesc(b.input));
      } catch (err) {
        if (!createMayHaveHappened(err)) await call.annotate({ [APPLIED_ANNOTATION]: null });
        throw err;
      }
    }
    // The template exists now: a failed read-back must not reach the loop as a create
    // that did not happen (a list error proves nothing about the create, and the loop
    // would forget create-pending and create a second template). The id is looked up by
    // name at the next reconcile instead.
    let ids: string[];
    try {
      ids = await this.idsNamed(name, ownMark(call));
    } catch {
      return {};
    }
    return ids.length === 1 ? { externalId: ids[0] as string } : {};
  }

  /** Templates carry no client token: a created one is found by its name. */
  lookupKey(obj: TrainingTemplateObject): LookupKey {
    return { what: "template name", value: templateName(obj) };
  }

  async lookupByToken(call: Call): Promise<string[] | undefined> {
    if (!this.service.isEndpointEnabled("listTemplates")) return undefined;
    return this.idsNamed(templateName(call.obj), ownMark(call));
  }

  async tokenAbsence(call: Call): Promise<TokenAbsence> {
    return absenceVerdict(await this.service.templates.provesNameAbsent(templateName(call.obj)));
  }

  async observe(call: Call, id: string): Promise<Observation<TrainingTemplate>> {
    const remote = await this.find(id, templateName(call.obj));
    return remote ? this.observation(call, remote) : { exists: false };
  }

  /**
   * A settled template's poll, from one walk of the template list per poll interval
   * shared by every template (the template has no detail read: `observe` walks the
   * list filtered by name for each template).
   */
  async observeFromList(
    call: Call,
    id: string,
    maxAgeMs: number,
  ): Promise<ListedObservation<TrainingTemplate> | undefined> {
    const view = await this.service.templates.listSnapshot(maxAgeMs);
    return listedObservation(view, id, (r) => this.observation(call, r));
  }

  private observation(
    call: Call,
    remote: TrainingTemplate,
  ): Observation<TrainingTemplate> & { exists: true } {
    const b = body(call, this.adoption);
    const fromJob = call.obj.spec.fromTrainingJobRef !== undefined;
    // A change made outside the cluster, seen in the template list (read once per poll
    // interval for every template, observeFromList), and a spec not applied yet.
    const drift = b?.ok && !fromJob ? templateDrift(b.input, remote) : [];
    const upToDate =
      drift.length === 0 &&
      !needsUpdate({
        fromJob,
        desiredHash: b?.ok ? bodyHash(b.input) : undefined,
        applied: readApplied(call.obj.metadata.annotations?.[APPLIED_ANNOTATION]),
      });
    return {
      exists: true,
      upToDate,
      differs: drift.length ? drift : ["the template's configuration"],
      ready: { status: "True", reason: "Available", message: "" },
      remote,
    };
  }

  async update(call: Call, id: string, remote: TrainingTemplate): Promise<UpdateResult> {
    const b = body(call, this.adoption);
    if (!b) return { outcome: "Waiting", message: "waiting for the references to resolve" };
    if (!b.ok) {
      return b.reason === BINDING_REFUSALS.adoption
        ? { outcome: "Refused", reason: b.reason, message: b.message }
        : { outcome: "Waiting", message: b.message };
    }
    const at = rfc3339(call.now());
    const drift = templateDrift(b.input, remote);
    await this.service.templates.update(id, withOwnerInDesc(b.input));
    if (drift.length > 0) {
      call.warning(
        "DriftCorrected",
        `changed outside the cluster, put back with a full update: ${drift.join(", ")}`,
      );
    }
    // After the call: a crash before this write only repeats the (idempotent) full update.
    await call.annotate({ [APPLIED_ANNOTATION]: JSON.stringify({ hash: bodyHash(b.input), at }) });
    return { outcome: "Applied", message: `template ${id} fully updated from the spec` };
  }

  deleteConfigured(): boolean {
    return this.service.isEndpointEnabled("deleteTemplate");
  }

  async delete(_call: Call, id: string): Promise<DeleteResult> {
    if (!this.service.isEndpointEnabled("deleteTemplate")) return "NotConfigured";
    await this.service.templates.delete(id);
    // The service may list the template a while after the delete: observed until gone.
    return "InProgress";
  }

  /**
   * Ids of the templates named exactly `name`; of several (a service that lets names
   * repeat), those whose owner mark is `own`, or all of them when none has it (or no
   * `own` is given: the name check before a create).
   */
  private async idsNamed(name: string, own?: string): Promise<string[]> {
    const named: TrainingTemplate[] = [];
    for await (const t of this.service.templates.iterate({ name })) {
      if (t.name === name) named.push(t);
    }
    const mine = named.filter((t) => {
      const mark = this.ownerOf(t);
      return mark !== undefined && !("unread" in mark) && formatOwnerMark(mark) === own;
    });
    return (named.length > 1 && mine.length > 0 ? mine : named).map((t) => t.id);
  }

  /** Template `id`: looked for under `name` first, then in the whole list (renamed). */
  private async find(id: string, name: string): Promise<TrainingTemplate | undefined> {
    for await (const t of this.service.templates.iterate({ name })) if (t.id === id) return t;
    for await (const t of this.service.templates.iterate()) if (t.id === id) return t;
    return undefined;
  }
}
