/**
 * The service side `npm run new-kind` writes: the kind's operations
 * (src/service/kinds/<kind>.ts, joined to the endpoint table by the generated index)
 * and the emulator's handlers of them (src/emulator/kinds/<kind>.ts).
 */
import type { KindNames } from "./names.js";

/** The content of src/service/kinds/<lower>.ts. */
export function serviceModule(n: KindNames): string {
  return `/**
 * The ${n.kind} kind's service operations (scaffolded by \`npm run new-kind\`).
 * TODO(${n.kind}): the paths below are placeholders (\`assumed\`): set the spec's paths
 * (\`documented\` where the spec shows them), list the assumed ones in
 * docs/service-assumptions.md, and fit the schemas to the service's answers.
 * \`endpoints\` joins the endpoint table (gathered by the generated index.ts);
 * {@link ${n.kind}Operations} calls them through any {@link OperationCaller} (an
 * account's calls, \`AccountCalls\`).
 */
import { z } from "zod";
import { assumed, type EndpointDeclarations } from "../endpoint-definition.js";
import type { OperationCaller } from "../operation-caller.js";
import { type PageWalkEnd, paginate } from "../pagination.js";
import { type Page, pageOf } from "../schemas/data.js";

/** The ${n.words} operations, by the names the operator configuration uses. */
export const endpoints = {
  create${n.kind}: assumed("POST", "/v1/${n.plural}", false),
  get${n.kind}: assumed("GET", "/v1/${n.plural}/{id}", true),
  list${n.kind}s: assumed("GET", "/v1/${n.plural}", true),
  update${n.kind}: assumed("PUT", "/v1/${n.plural}/{id}", true),
  delete${n.kind}: assumed("DELETE", "/v1/${n.plural}/{id}", true),
} as const satisfies EndpointDeclarations;

/** A ${n.words} as the service answers it (fields the operator does not read are kept). */
export const remote${n.kind}Schema = z.looseObject({
  id: z.coerce.string(),
  name: z.string(),
  description: z.string().optional(),
  sizeGB: z.number(),
  status: z.string(),
  createdTime: z.string().optional(),
});
/** A ${n.words} as the service answers it. */
export type Remote${n.kind} = z.infer<typeof remote${n.kind}Schema>;

/** The body of a create. */
export const create${n.kind}BodySchema = z.object({
  name: z.string().min(1).max(128),
  description: z.string().max(1024).optional(),
  sizeGB: z.number().int().min(1),
});
/** The body of a create. */
export type Create${n.kind}Request = z.infer<typeof create${n.kind}BodySchema>;

/** The body of an update. */
export const update${n.kind}BodySchema = z.object({ sizeGB: z.number().int().min(1) });

const createdSchema = z.looseObject({ id: z.coerce.string() });
const ignored = z.unknown().transform((): void => undefined);

/** The ${n.words} operations, called through \`caller\`. */
export class ${n.kind}Operations {
  constructor(private readonly caller: OperationCaller) {}

  /** Creates a ${n.words} (never retried blindly); answers its id. */
  async create(req: Create${n.kind}Request): Promise<string> {
    const body = this.caller.checkedBody("create${n.kind}", create${n.kind}BodySchema, req);
    return (await this.caller.request("create${n.kind}", { body }, createdSchema)).id;
  }

  /** One ${n.words} by id; \`ServiceNotFoundError\` when it does not exist. */
  get(id: string): Promise<Remote${n.kind}> {
    return this.caller.request("get${n.kind}", { params: { id } }, remote${n.kind}Schema);
  }

  /** One page of the ${n.words} list. */
  list(pageNo: number, pageSize: number): Promise<Page<Remote${n.kind}>> {
    return this.caller.request(
      "list${n.kind}s",
      { query: { pageNo, pageSize } },
      pageOf(remote${n.kind}Schema),
    );
  }

  /** Every ${n.words}, page by page (the walk returns whether it was complete). */
  iterate(): AsyncGenerator<Remote${n.kind}, PageWalkEnd, undefined> {
    return paginate(
      (pageNo, pageSize) => this.list(pageNo, pageSize),
      (r) => r.id,
    );
  }

  /** Sets the size of a ${n.words}. */
  async resize(id: string, sizeGB: number): Promise<void> {
    const body = this.caller.checkedBody("update${n.kind}", update${n.kind}BodySchema, { sizeGB });
    await this.caller.request("update${n.kind}", { params: { id }, body }, ignored);
  }

  /** Deletes a ${n.words}. */
  async delete(id: string): Promise<void> {
    await this.caller.request("delete${n.kind}", { params: { id } }, ignored);
  }
}
`;
}

/** The content of src/emulator/kinds/<lower>.ts. */
export function emulatorModule(n: KindNames): string {
  return `/**
 * The emulator's ${n.words} operations (scaffolded by \`npm run new-kind\`): created
 * available at once, resized up only, deleted at once. TODO(${n.kind}): play what the
 * service does (states over time, its refusals); every behaviour the spec leaves open is
 * a mode of the emulator that tests exercise: declare its setting in
 * ${n.lower}.settings.ts and read it here as \`ctx.state.behaviour.<name>\`.
 */
import {
  create${n.kind}BodySchema,
  type endpoints,
  update${n.kind}BodySchema,
} from "../../service/kinds/${n.lower}.js";
import {
  badRequest,
  type Handler,
  type HandlerContext,
  pageOfRecords,
  parseBody,
  recordOfPathId,
} from "../handler-context.js";
import type { StorageObjectRecord } from "../records.js";

/** The records of the ${n.words}s (EmulatorState.records). */
const RECORDS = "${n.lower}";

function ${n.camel}(ctx: HandlerContext): StorageObjectRecord {
  return recordOfPathId(ctx, ctx.state.records(RECORDS), "${n.words}");
}

/** The ${n.words} operations, by endpoint name. */
export const handlers = {
  create${n.kind}: (ctx) => {
    const body = parseBody(create${n.kind}BodySchema, ctx.body);
    const id = ctx.state.nextId("${n.lower}");
    const createdTime = new Date(ctx.state.now()).toISOString();
    const fields = { ...body, id, status: "available", createdTime };
    ctx.state.records(RECORDS).set(id, { id, fields });
    return { id };
  },
  get${n.kind}: (ctx) => ${n.camel}(ctx).fields,
  list${n.kind}s: (ctx) =>
    pageOfRecords(
      [...ctx.state.records(RECORDS).values()].map((r) => r.fields),
      ctx,
    ),
  update${n.kind}: (ctx) => {
    const record = ${n.camel}(ctx);
    const { sizeGB } = parseBody(update${n.kind}BodySchema, ctx.body);
    if (sizeGB < (record.fields.sizeGB as number)) {
      throw badRequest(\`${n.words} \${record.id} cannot shrink\`);
    }
    record.fields = { ...record.fields, sizeGB };
    return {};
  },
  delete${n.kind}: (ctx) => {
    ctx.state.records(RECORDS).delete(${n.camel}(ctx).id);
    return {};
  },
} satisfies Record<keyof typeof endpoints, Handler>;
`;
}

/**
 * The kind's emulator settings module (src/emulator/kinds/<kind>.settings.ts): none
 * yet, with an example of one. It imports nothing; `npm run generate` gathers it for
 * the emulator's behaviour, admin API, start options and CLI flags.
 */
export function emulatorSettingsModule(n: KindNames): string {
  return `/**
 * The emulator settings of ${n.kind}: the modes and timings of its handlers
 * (${n.lower}.ts) that the spec leaves open, each a non-negative integer the handlers read
 * as \`state.behaviour.<name>\`. Imports nothing: state.ts reads every kind's settings
 * through the generated index (settings-index.ts), and the admin API (\`PATCH
 * /_admin/config\`), the emulator's start options and \`aidc-operator emulator
 * --<name in kebab case>\` take them without an edit of their own. A name is unique
 * across kinds. TODO(${n.kind}): declare what the service leaves open, e.g.
 *
 *   ${n.camel}DelayMs: { default: 1000, description: "how long a ${n.words} stays creating" },
 */
export const settings = {} as const;
`;
}
