/**
 * The TrainingTemplate kind's service operations: create and update as the spec
 * documents them (the create answers no id: the template is found by name in the
 * list), and the list and delete this project assumes (docs/service-assumptions.md),
 * with the create / full-update body in its caller form and its wire form (the record
 * the list answers: schemas/template.ts). `endpoints` joins the endpoint table
 * (generated kinds/index.ts); the account's calls (`AccountCalls`) hold one
 * {@link TemplateOperations}.
 */
import { z } from "zod";
import { assumed, documented, type EndpointDeclarations } from "../endpoint-definition.js";
import { KindList } from "../kind-list.js";
import type { ListSnapshotView } from "../list-snapshot.js";
import type { OperationsContext } from "../operation-caller.js";
import { type PageWalkEnd, walkProvesAbsent } from "../pagination.js";
import { emptyData, type Page } from "../schemas/data.js";
import {
  IMAGE_TYPES,
  type ImageType,
  TRAINING_FRAMEWORKS,
  TRAINING_TYPES,
  type TrainingFramework,
  type TrainingType,
} from "../schemas/enums.js";
import { lenientEnum, matchEnum } from "../schemas/primitives.js";
import { type StorageConfigItem, storageConfigItemSchema } from "../schemas/storage-config.js";
import { type TrainingTemplate, trainingTemplateSchema } from "../schemas/template.js";

/** A template's resource request: `workerCount` an integer, every other key a string. */
export interface TemplateResource {
  type?: string;
  gpuName?: string;
  cpuCores?: string;
  gpuCount?: string;
  memoryGB?: string;
  productCode?: string;
  productName?: string;
  workerCount?: number;
  productPrice?: string;
}

/** Template fields as callers give them (create and full update); none is required. */
export interface TrainingTemplateInput {
  name?: string;
  desc?: string;
  aidcId?: number;
  trainingType?: TrainingType | string;
  /** Sent as `trainingFramwork`. */
  trainingFramework?: TrainingFramework | string;
  imageType?: ImageType | string;
  image?: string;
  env?: Record<string, string>;
  resource?: TemplateResource;
  enableAutoRetry?: boolean;
  storageConfigs?: StorageConfigItem[];
  maxRetryCount?: number;
  enableTimeoutCancel?: boolean;
  timeoutHours?: number;
  startCommand?: string;
  /** 1..3. */
  priority?: number;
}

/**
 * A template body as the service receives it: none required, priority 1..3, both
 * framework spellings, enum values in any case.
 */
export const templateBodySchema = z.object({
  name: z.string().optional(),
  desc: z.string().optional(),
  aidcId: z.int().optional(),
  trainingType: lenientEnum(TRAINING_TYPES).optional(),
  trainingFramwork: lenientEnum(TRAINING_FRAMEWORKS).optional(),
  trainingFramework: lenientEnum(TRAINING_FRAMEWORKS).optional(),
  imageType: lenientEnum(IMAGE_TYPES).optional(),
  image: z.string().optional(),
  env: z.record(z.string(), z.string()).optional(),
  resource: z
    .object({ workerCount: z.int().min(1).optional() })
    .catchall(z.string())
    .optional(),
  enableAutoRetry: z.boolean().optional(),
  storageConfigs: z.array(storageConfigItemSchema).optional(),
  maxRetryCount: z.int().min(0).optional(),
  enableTimeoutCancel: z.boolean().optional(),
  timeoutHours: z.int().min(1).optional(),
  startCommand: z.string().optional(),
  priority: z.int().min(1).max(3).optional(),
});

/**
 * The wire body of a template create or update, in the case of the template table
 * (`PRE_TRAINING`, `PyTorch`), with `trainingFramwork` spelled as the service spells it.
 */
export function toTemplateBody(input: TrainingTemplateInput): Record<string, unknown> {
  const { trainingFramework, trainingType, imageType, ...rest } = input;
  const body: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(rest)) if (v !== undefined) body[k] = v;
  if (trainingType !== undefined) {
    body.trainingType = matchEnum(TRAINING_TYPES, trainingType) ?? trainingType;
  }
  if (trainingFramework !== undefined) {
    body.trainingFramwork = matchEnum(TRAINING_FRAMEWORKS, trainingFramework) ?? trainingFramework;
  }
  if (imageType !== undefined) body.imageType = matchEnum(IMAGE_TYPES, imageType) ?? imageType;
  return body;
}

/** Query of the assumed template list. */
export interface TemplateListQuery {
  pageNo?: number;
  pageSize?: number;
  /** Fuzzy match on the template name. */
  name?: string;
  aidcId?: number;
}

/** The template operations of the endpoint table; the delete is off until a path is configured. */
export const endpoints = {
  createTemplate: documented("POST", "/v1/training/template/create", false),
  updateTemplate: documented("PUT", "/v1/training/template/{id}/update", true),
  listTemplates: assumed("GET", "/v1/training/template/list", true),
  deleteTemplate: assumed("DELETE", "/v1/training/template/{id}", true, false),
} as const satisfies EndpointDeclarations;

/**
 * A view of the account's template list through `ctx`'s caller (its snapshot shared by
 * every view): {@link TemplateOperations}' own, and the task operations' for a task
 * saved as a template, a change of the list.
 */
export function templateList(
  ctx: OperationsContext,
): KindList<TrainingTemplate, TemplateListQuery> {
  return new KindList(ctx.caller, {
    operation: "listTemplates",
    record: trainingTemplateSchema,
    id: (template) => template.id,
    now: ctx.now,
    knownMissing: ctx.knownMissing,
    states: ctx.lists,
  });
}

/** Training templates, called through the context's caller. */
export class TemplateOperations {
  private listView: KindList<TrainingTemplate, TemplateListQuery> | undefined;

  constructor(private readonly ctx: OperationsContext) {}

  /** The template list, walked at most once per asked age for every TrainingTemplate; made at first use. */
  private get list(): KindList<TrainingTemplate, TemplateListQuery> {
    this.listView ??= templateList(this.ctx);
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

  /**
   * Whether one walk of the whole template list, started now, proves that no template is
   * named `name` (a template's identity: its create carries no token) (`walkProvesAbsent`);
   * undefined when the list is disabled.
   */
  async provesNameAbsent(name: string): Promise<boolean | undefined> {
    if (!this.list.enabled) return undefined;
    return walkProvesAbsent(
      this.iterate(),
      (t) => t.name !== undefined,
      (t) => t.name === name,
    );
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
