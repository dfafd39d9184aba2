/**
 * The catalog mirror's decisions, pure: the objects a connection's catalog asks for
 * ({@link trainingProductObjects}, {@link nasProductObjects}) and what to write so that
 * the cluster holds exactly them ({@link mirrorChanges}). An object already equal to
 * its product is not written, so a refresh of an unchanged catalog writes nothing.
 */
import { CATALOG_LABELS } from "../../crds/catalog.js";
import { INTEGER_LIMITS } from "../../crds/fields.js";
import type { NasProductSpec } from "../../crds/nasproduct.js";
import type { TrainingProductSpec } from "../../crds/trainingproduct.js";
import { capFreeText, capValue, REMOTE_VALUE_CHARS } from "../../runtime/object-writes.js";
import type { KubeObject } from "../../runtime/resource.js";
import type { NasProduct } from "../../service/schemas/nas.js";
import type { TrainingProduct } from "../../service/schemas/training.js";
import { connectionLabelValue, gpuModelOf, labelValue, productObjectName } from "./naming.js";

/** One catalog object as the mirror wants it: its name, its labels, its spec. */
export interface DesiredProduct {
  name: string;
  labels: Record<string, string>;
  spec: Record<string, unknown>;
}

/** What to write: objects to create, objects to change (with the cached one), names to delete. */
export interface MirrorChanges {
  create: DesiredProduct[];
  update: { desired: DesiredProduct; existing: KubeObject }[];
  remove: KubeObject[];
}

/** How many of the service's `ext` entries a TrainingProduct keeps (the CRD's maxProperties). */
export const MAX_EXT_ENTRIES = 32;

/** An integer of the service's answer within the catalog kinds' bound, else left out. */
function boundedInt(n: number | undefined): number | undefined {
  return n !== undefined && n <= INTEGER_LIMITS.id ? n : undefined;
}

/** The first {@link MAX_EXT_ENTRIES} `ext` entries by name, names and values cut; undefined when none. */
function boundedExt(ext: Record<string, string> | undefined): Record<string, string> | undefined {
  const entries = Object.entries(ext ?? {})
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .slice(0, MAX_EXT_ENTRIES)
    .map(([k, v]) => [capValue(k), capFreeText(v)]);
  return entries.length > 0 ? Object.fromEntries(entries) : undefined;
}

/**
 * A product code a catalog object can hold: present and within the CRD's bound (a
 * longer one cannot be written whole, and a cut one would name another product).
 */
function mirrorable(code: string | undefined): code is string {
  return code !== undefined && code !== "" && code.length <= REMOTE_VALUE_CHARS;
}

/** The fields of `fields` whose value is defined (a spec omits what the service left out). */
function defined(fields: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined));
}

function labelsOf(
  connection: string | undefined,
  computeCenterId: number | undefined,
  extra: Record<string, string> = {},
): Record<string, string> {
  return {
    [CATALOG_LABELS.connection]: connectionLabelValue(connection),
    ...(computeCenterId !== undefined
      ? { [CATALOG_LABELS.computeCenter]: String(computeCenterId) }
      : {}),
    ...extra,
  };
}

/** Drops a second product with the same object name (the service listed it twice). */
function unique(products: DesiredProduct[]): DesiredProduct[] {
  const seen = new Set<string>();
  return products.filter((p) => !seen.has(p.name) && seen.add(p.name));
}

/**
 * The TrainingProducts of `connection`'s (undefined: the default's) training catalog;
 * a specification without a product code cannot be ordered and is left out.
 */
export function trainingProductObjects(
  connection: string | undefined,
  products: readonly TrainingProduct[],
): DesiredProduct[] {
  return unique(
    products.flatMap((p) => {
      if (!mirrorable(p.productCode)) return [];
      const gpuModel = capValue(gpuModelOf(p.gpuName));
      const spec: TrainingProductSpec = defined({
        productCode: p.productCode,
        displayName: capValue(p.name),
        connection,
        computeCenterId: boundedInt(p.aidcId),
        cpuCores: capValue(p.cpuCores),
        memoryGB: capValue(p.memoryGB),
        gpuModel,
        gpuCount: capValue(p.gpuCount),
        diskGB: capValue(p.diskGB),
        price: capValue(p.price),
        priceUnit: boundedInt(p.priceUnit),
        remainingCount: boundedInt(p.remainingCount),
        ext: boundedExt(p.ext),
      }) as TrainingProductSpec;
      return [
        {
          name: productObjectName(connection, p.productCode, p.aidcId),
          labels: labelsOf(connection, p.aidcId, {
            [CATALOG_LABELS.gpuModel]: labelValue(gpuModel),
          }),
          spec,
        },
      ];
    }),
  );
}

/**
 * The NasProducts of `connection`'s NAS catalog, each with its availability verdict
 * from `available` (by product code and compute center, {@link verdictKey}) when known.
 */
export function nasProductObjects(
  connection: string | undefined,
  products: readonly NasProduct[],
  available: ReadonlyMap<string, boolean>,
): DesiredProduct[] {
  return unique(
    products.flatMap((p) => {
      if (!mirrorable(p.productCode)) return [];
      const spec: NasProductSpec = defined({
        productCode: p.productCode,
        displayName: capValue(p.name),
        connection,
        computeCenterId: boundedInt(p.aidcId),
        resourceTypeCode: capValue(p.resourceTypeCode),
        resourceSpecParamCode: capValue(p.resourceSpecParamCode),
        defaultCapacity: capValue(p.paramValue),
        capacityUnit: boundedInt(p.paramUnit),
        minCapacityGB: boundedInt(p.paramValueMin),
        maxCapacityGB: boundedInt(p.paramValueMax),
        price: capValue(p.price),
        priceUnit: boundedInt(p.priceUnit),
        currencyUnitOfMeasure: boundedInt(p.currencyUnitOfMeasure),
        currencyUnitPriceFormula: capFreeText(p.currencyUnitPriceFormula),
        available: available.get(verdictKey(p.productCode, p.aidcId)),
      }) as NasProductSpec;
      return [
        {
          name: productObjectName(connection, p.productCode, p.aidcId),
          labels: labelsOf(connection, p.aidcId),
          spec,
        },
      ];
    }),
  );
}

/** The key of a NAS availability verdict: product code and compute center. */
export function verdictKey(code: string, computeCenterId: number | undefined): string {
  return JSON.stringify([code, computeCenterId ?? null]);
}

/** Equal as JSON values, whatever the order of object keys. */
export function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  return ka.every((k) =>
    sameValue((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]),
  );
}

/** Whether `existing` carries `desired`'s labels (other labels may be there) and spec. */
export function isUpToDate(desired: DesiredProduct, existing: KubeObject): boolean {
  const labels = existing.metadata?.labels ?? {};
  return (
    Object.entries(desired.labels).every(([k, v]) => labels[k] === v) &&
    sameValue(desired.spec, existing.spec)
  );
}

/**
 * What to write so that `existing` (the cluster's objects of one kind and connection)
 * becomes `desired`: missing objects created, differing ones updated, the rest deleted.
 * An object being deleted is left to its deletion.
 */
export function mirrorChanges(
  desired: readonly DesiredProduct[],
  existing: readonly KubeObject[],
): MirrorChanges {
  const byName = new Map(existing.map((o) => [o.metadata?.name ?? "", o]));
  const wanted = new Set(desired.map((d) => d.name));
  const changes: MirrorChanges = { create: [], update: [], remove: [] };
  for (const d of desired) {
    const found = byName.get(d.name);
    if (!found) changes.create.push(d);
    else if (!found.metadata?.deletionTimestamp && !isUpToDate(d, found)) {
      changes.update.push({ desired: d, existing: found });
    }
  }
  for (const o of existing) {
    if (!wanted.has(o.metadata?.name ?? "") && !o.metadata?.deletionTimestamp) {
      changes.remove.push(o);
    }
  }
  return changes;
}

/**
 * A JSON merge patch that turns `from` into `to`: changed values set, fields `to` lacks
 * set to null (objects patched field by field).
 */
export function mergePatch(from: unknown, to: Record<string, unknown>): Record<string, unknown> {
  const old = (typeof from === "object" && from !== null ? from : {}) as Record<string, unknown>;
  const patch: Record<string, unknown> = {};
  for (const k of Object.keys(old)) if (!(k in to)) patch[k] = null;
  for (const [k, v] of Object.entries(to)) {
    if (sameValue(old[k], v)) continue;
    const isObject = typeof v === "object" && v !== null && !Array.isArray(v);
    patch[k] =
      isObject && typeof old[k] === "object" && old[k] !== null
        ? mergePatch(old[k], v as Record<string, unknown>)
        : v;
  }
  return patch;
}
