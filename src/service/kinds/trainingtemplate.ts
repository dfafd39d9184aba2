/**
 * The TrainingTemplate kind's service operations: create and update as the spec
 * documents them (the create answers no id: the template is found by name in the
 * list), and the list and delete this project assumes (docs/service-assumptions.md).
 * `endpoints` joins the endpoint table (generated kinds/index.ts); the account's
 * calls (`AccountCalls`) hold one {@link TemplateOperations}.
 */
import { assumed, documented, type EndpointDeclarations } from "../endpoint-definition.js";
import { KindList } from "../kind-list.js";
import type { ListSnapshotView } from "../list-snapshot.js";
import type { OperationsContext } from "../operation-caller.js";
import type { PageWalkEnd } from "../pagination.js";
import { emptyData, type Page } from "../schemas/data.js";
import {
  type TemplateListQuery,
  type TrainingTemplate,
  type TrainingTemplateInput,
  templateBodySchema,
  toTemplateBody,
  trainingTemplateSchema,
} from "../schemas/template.js";

/** The template operations of the endpoint table; the delete is off until a path is configured. */
export const endpoints = {
  createTemplate: documented("POST", "/v1/training/template/create", false),
  updateTemplate: documented("PUT", "/v1/training/template/{id}/update", true),
  listTemplates: assumed("GET", "/v1/training/template/list", true),
  deleteTemplate: assumed("DELETE", "/v1/training/template/{id}", true, false),
} as const satisfies EndpointDeclarations;

/** Training templates, called through the context's caller. */
export class TemplateOperations {
  private listView: KindList<TrainingTemplate, TemplateListQuery> | undefined;

  constructor(private readonly ctx: OperationsContext) {}

  /** The template list, walked at most once per asked age for every TrainingTemplate; made at first use. */
  private get list(): KindList<TrainingTemplate, TemplateListQuery> {
    this.listView ??= new KindList(this.ctx.caller, {
      operation: "listTemplates",
      record: trainingTemplateSchema,
      id: (template) => template.id,
      now: this.ctx.now,
      knownMissing: this.ctx.knownMissing,
      states: this.ctx.lists,
    });
    return this.listView;
  }

  /** Creates a template (the answer carries no id: find it with {@link page} by name). */
  async create(t: TrainingTemplateInput): Promise<void> {
    const body = this.ctx.caller.checkedBody(
      "createTemplate",
      templateBodySchema,
      toTemplateBody(t),
    );
    return this.list.changing(() => this.ctx.caller.request("createTemplate", { body }, emptyData));
  }

  /** Replaces every field of template `id`. */
  async update(id: string, t: TrainingTemplateInput): Promise<void> {
    const body = this.ctx.caller.checkedBody(
      "updateTemplate",
      templateBodySchema,
      toTemplateBody(t),
    );
    return this.list.changing(() =>
      this.ctx.caller.request("updateTemplate", { params: { id }, body }, emptyData),
    );
  }

  /** One page of the template list (assumed endpoint). */
  page(query: TemplateListQuery = {}): Promise<Page<TrainingTemplate>> {
    return this.list.page(query);
  }

  /** Every template matching `query`, page by page (the walk returns whether it was complete). */
  iterate(
    query: Omit<TemplateListQuery, "pageNo"> = {},
  ): AsyncGenerator<TrainingTemplate, PageWalkEnd, undefined> {
    return this.list.iterate(query);
  }

  /** The whole template list by id, at most `maxAgeMs` old (see `KindList.read`). */
  listSnapshot(maxAgeMs: number): Promise<ListSnapshotView<TrainingTemplate> | undefined> {
    return this.list.read(maxAgeMs);
  }

  /** Deletes a template; disabled unless configured. */
  delete(id: string): Promise<void> {
    return this.list.changing(() =>
      this.ctx.caller.request("deleteTemplate", { params: { id } }, emptyData),
    );
  }
}
