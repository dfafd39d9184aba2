/**
 * What the status-size tests share (src/controllers/status-size.test.ts,
 * src/controllers/trainingjob/status-size.test.ts,
 * src/controllers/catalog/catalog-size.test.ts): the bound of each kind, strings longer
 * than any the operator keeps, every condition a kind can carry at its longest, and the
 * measure of a status. The bounds are stated in docs/custom-resources.md ("Status size").
 */
import { expect } from "vitest";
import type { z } from "zod";
import { REASONS } from "../../src/crds/index.js";
import { type Condition, setCondition } from "../../src/runtime/index.js";

/**
 * The bound of each kind's status (of a catalog kind: its whole object), in KiB of JSON,
 * from the largest answer of the service, conditions included.
 */
export const STATUS_BOUNDS_KIB = {
  NasVolume: 24,
  CciInstance: 96,
  BlockVolume: 16,
  FileSystem: 80,
  Bucket: 16,
  TrainingTemplate: 24,
  ServiceConnection: 12,
  /** Of 64 pods; of 1024 pods (the most workers a job has): `TrainingJob1024Pods`. */
  TrainingJob: 640,
  TrainingJob1024Pods: 1024,
  TrainingProduct: 48,
  NasProduct: 8,
} as const;

/** A string length beyond any the status keeps (the service documents none). */
export const HUGE = 100_000;

const longs = new Map<string, string>();

/** A string of {@link HUGE} `c`s (one per character, shared: records may hold thousands). */
export function long(c: string): string {
  const known = longs.get(c);
  if (known !== undefined) return known;
  const made = c.repeat(HUGE);
  longs.set(c, made);
  return made;
}

/** 0 .. n-1. */
export function range(n: number): number[] {
  return Array.from({ length: n }, (_, i) => i);
}

/** The time the tests' conditions are set at. */
export const NOW = new Date("2026-01-01T00:00:00Z");

/**
 * Every condition type `kind` can carry (the reason table's, and kstatus's Stalled and
 * Reconciling), each with the table's longest reason of the kind and a {@link HUGE}
 * message, set as the operator sets them (setCondition cuts the message).
 */
export function conditionsOf(kind: string): Condition[] {
  const types = new Set(["Stalled", "Reconciling"]);
  let reason = "";
  for (const [name, e] of REASONS.entries()) {
    if (!e.kinds.includes(kind)) continue;
    for (const c of e.conditions) types.add(c);
    if (name.length > reason.length) reason = name;
  }
  let list: Condition[] = [];
  for (const type of types) {
    list = setCondition(list, { type, status: "False", reason, message: long("m") }, 1, NOW);
  }
  return list;
}

/** The longest string (value or key) anywhere in `value`. */
export function longestString(value: unknown): number {
  if (typeof value === "string") return value.length;
  if (typeof value !== "object" || value === null) return 0;
  return Math.max(
    0,
    ...Object.entries(value).map(([k, v]) => Math.max(k.length, longestString(v))),
  );
}

/** Bytes of `value` as JSON. */
export function jsonBytes(value: unknown): number {
  return Buffer.byteLength(JSON.stringify(value));
}

/**
 * `status` of `kind` with a generation and every condition of the kind, checked against
 * the kind's status `schema`, and its size in bytes.
 */
export function measuredStatus(kind: string, schema: z.ZodType, status: object) {
  const whole = { observedGeneration: 1, ...status, conditions: conditionsOf(kind) };
  expect(() => schema.parse(whole)).not.toThrow();
  return { whole, bytes: jsonBytes(whole) };
}

/** `kib` KiB in bytes. */
export function kibibytes(kib: number): number {
  return kib * 1024;
}

/** A task or template's stored configuration at its largest. */
export const largestStoredConfig = {
  name: long("n"),
  image: long("i"),
  imageType: long("t"),
  trainingType: long("t"),
  trainingFramework: long("f"),
  priority: 3,
  startCommand: long("c"),
  enableAutoRetry: true,
  maxRetryCount: 100,
  enableTimeoutCancel: true,
  timeoutHours: 8760,
  env: Object.fromEntries(
    range(1000).map((i) => [`${i}${long("K")}`, `secret-value-${long("v")}`]),
  ),
  resource: {
    type: long("t"),
    productCode: long("c"),
    productName: long("p"),
    cpuCores: long("c"),
    memoryGB: long("m"),
    gpuName: long("g"),
    gpuCount: long("g"),
    workerCount: 64,
    productPrice: long("9"),
  },
};
