/**
 * Seeding the emulator and changing the remote state of its resources, as tests and
 * benchmarks do through the admin API (or in-process). Inputs are validated with zod so
 * that a typo in a test fails loudly instead of seeding nothing.
 */
import { z } from "zod";
import { storageConfigItemSchema } from "../service/schemas/storage-config.js";
import { defaultCciInstances } from "./fixtures.js";
import { createPods } from "./pods.js";
import type { CciRecord, NasProductRecord, PodRecord, TrainingProductRecord } from "./records.js";
import type { EmulatorState } from "./state.js";

const loose = z.record(z.string(), z.unknown());

/** Error details of a CCI instance, as seeded or patched. */
export const cciErrorDetailsPatchSchema = z.strictObject({
  instanceStatus: z.string().default("FAILED"),
  instanceSubStatus: z.string().default("ERROR"),
  errorDescription: z.string().default(""),
  suggestion: z.string().default(""),
  errorDetail: z.string().default(""),
});

/** A NAS to seed; everything but what you care about has a default. */
export const seedNasSchema = z.strictObject({
  id: z.string().optional(),
  name: z.string().optional(),
  description: z.string().default(""),
  status: z.string().default("Running"),
  quotaGB: z.int().positive().default(100),
  usedGB: z.int().min(0).default(0),
  mountPath: z.string().optional(),
  productCode: z.string().default("nas.capacity.standard"),
  aidcId: z.int().default(1),
});

/** A task to seed; RUNNING tasks get pods. */
export const seedTaskSchema = z.strictObject({
  id: z.string().optional(),
  name: z.string(),
  desc: z.string().default(""),
  status: z.string().default("RUNNING"),
  createType: z.string().default("DIRECT"),
  trainingType: z.string().optional(),
  trainingFramework: z.string().optional(),
  imageType: z.string().optional(),
  priority: z.int().min(1).max(3).default(3),
  image: z.string().default("registry.example.com/ml/train:latest"),
  productCode: z.string().default("train.cpu.16"),
  workerCount: z.int().min(1).default(1),
  storageConfigs: z.array(storageConfigItemSchema).default([]),
  env: z.record(z.string(), z.string()).default({}),
  startCommand: z.string().default(""),
});

/**
 * What `POST /_admin/seed` takes: resources to add, catalog entries to add or replace,
 * and product codes to take out of both catalogs (`removeProductCodes`, applied first).
 */
export const seedSchema = z.strictObject({
  removeProductCodes: z.array(z.string()).optional(),
  trainingProducts: z.array(loose).optional(),
  nasProducts: z.array(loose).optional(),
  cci: z.array(loose.and(z.object({ id: z.string() }))).optional(),
  nas: z.array(seedNasSchema).optional(),
  tasks: z.array(seedTaskSchema).optional(),
  templates: z.array(loose).optional(),
});

/** Seed input. */
export type SeedInput = z.input<typeof seedSchema>;

/** Ids of what a seed created, per kind, in input order. */
export interface SeedResult {
  nas: string[];
  tasks: string[];
  templates: string[];
  cci: string[];
}

function upsertBy<T extends { productCode?: string | undefined }>(list: T[], item: T): void {
  const i = list.findIndex((p) => p.productCode === item.productCode);
  if (i >= 0) list[i] = item;
  else list.push(item);
}

/** Applies a seed; throws a ZodError for invalid input. */
export function applySeed(state: EmulatorState, input: SeedInput): SeedResult {
  const seed = seedSchema.parse(input);
  const now = state.now();
  const result: SeedResult = { nas: [], tasks: [], templates: [], cci: [] };
  const removed = new Set(seed.removeProductCodes ?? []);
  if (removed.size > 0) {
    const kept = <T extends { productCode?: string | undefined }>(list: T[]) =>
      list.filter((p) => !removed.has(p.productCode ?? ""));
    state.trainingProducts.splice(0, Infinity, ...kept(state.trainingProducts));
    state.nasProducts.splice(0, Infinity, ...kept(state.nasProducts));
  }
  for (const p of seed.trainingProducts ?? [])
    upsertBy(state.trainingProducts, p as TrainingProductRecord);
  for (const p of seed.nasProducts ?? []) {
    upsertBy(state.nasProducts, { available: true, ...p } as NasProductRecord);
  }
  for (const n of seed.nas ?? []) {
    const id = n.id ?? state.nextId("nas");
    const name = n.name ?? id;
    state.nas.set(id, {
      id,
      name,
      description: n.description,
      orderInstanceId: `order-${id}`,
      status: n.status,
      storageType: "NAS",
      quotaGB: n.quotaGB,
      usedGB: n.usedGB,
      mountPath: n.mountPath ?? `/mnt/${name.replace(/[^a-zA-Z0-9_]/g, "_")}`,
      productCode: n.productCode,
      productName:
        state.nasProducts.find((p) => p.productCode === n.productCode)?.name ?? n.productCode,
      aidcId: n.aidcId,
      tenantId: "tenant-0001",
      createdAt: now,
      updatedAt: now,
      visibleAt: now,
    });
    result.nas.push(id);
  }
  for (const t of seed.tasks ?? []) {
    const id = t.id ?? state.nextId("task");
    const { trainingType, trainingFramework, imageType, ...rest } = t;
    const record = {
      ...rest,
      id,
      ...(trainingType ? { trainingType } : {}),
      ...(trainingFramework ? { trainingFramework } : {}),
      ...(imageType ? { imageType } : {}),
      aidcId: state.trainingProducts.find((p) => p.productCode === t.productCode)?.aidcId ?? 1,
      enableAutoRetry: false,
      maxRetryCount: 0,
      enableTimeoutCancel: false,
      timeoutHours: 0,
      createdAt: now,
      updatedAt: now,
      visibleAt: now,
      execInfos: [{ status: t.status, info: "seeded", at: now }],
      pods: [] as PodRecord[],
      ...(t.status === "RUNNING" ? { startedAt: now } : {}),
    };
    if (t.status === "RUNNING") record.pods = createPods(record, state);
    state.tasks.set(id, record);
    result.tasks.push(id);
  }
  for (const fields of seed.templates ?? []) {
    const id = typeof fields.id === "string" ? fields.id : state.nextId("tpl");
    state.templates.set(id, { id, fields: { ...fields, id }, createdAt: now, updatedAt: now });
    result.templates.push(id);
  }
  for (const c of seed.cci ?? []) {
    const { errorDetails, ...fields } = c;
    // A new instance starts from a running fixture, so a seed names only what matters.
    const base = state.cci.get(c.id) ?? defaultCciInstances()[0];
    const record: CciRecord = {
      id: c.id,
      fields: { ...(base?.fields ?? {}), ...fields },
      savingImageUntil: 0,
      images: [],
    };
    const details = cciErrorDetailsPatchSchema.safeParse(errorDetails);
    if (errorDetails !== undefined && details.success) record.errorDetails = details.data;
    state.cci.set(c.id, record);
    result.cci.push(c.id);
  }
  return result;
}
