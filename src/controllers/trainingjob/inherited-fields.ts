/**
 * The one table of the TrainingJob fields a TEMPLATE or COPY job takes from its
 * template or source job when its own spec omits them, and the rule that merges them:
 * the job's own value, else the inherited one, else the service's default (only
 * `priority` has one: 3, "default 3 on task creation"). Reference resolution picks
 * these fields from the template or source; the create request is built from the
 * merged result. Pure.
 */
import { trainingConfigShape } from "../../crds/training.js";
import type { TrainingJobSpec } from "../../crds/trainingjob.js";

/** The configuration shared by jobs and templates (`trainingConfigShape`) plus `priority`. */
export const INHERITED_FIELDS = [
  ...(Object.keys(trainingConfigShape) as (keyof typeof trainingConfigShape)[]),
  "priority",
] as const;

/** A field a job may take from its template or source job. */
export type InheritedField = (typeof INHERITED_FIELDS)[number];

/** The configuration fields a job may take from its template or source job. */
export type InheritedConfig = Pick<TrainingJobSpec, InheritedField>;

/**
 * The value the operator sends when neither the job nor its template or source sets
 * the field. Only `priority`: the operator always sends the priority it means, so that
 * the request says what the task runs at (the spec: "default 3 on task creation").
 * No other inherited field has a default: the CRD must not default any of them either,
 * or an omitted field would never be inherited.
 */
export const SERVICE_DEFAULTS: Readonly<Partial<InheritedConfig>> = { priority: 3 };

/** The inherited fields a spec (a job's or a template's) sets; the others are left out. */
export function pickInherited(
  spec: Partial<Record<InheritedField, unknown>>,
): Partial<InheritedConfig> {
  const out: Record<string, unknown> = {};
  for (const k of INHERITED_FIELDS) if (spec[k] !== undefined) out[k] = spec[k];
  return out as Partial<InheritedConfig>;
}

/**
 * `over` with the fields it omits taken from `under` (field by field; a list or map is
 * taken whole, never merged).
 */
export function overlayInherited(
  over: Partial<InheritedConfig>,
  under: Partial<InheritedConfig>,
): Partial<InheritedConfig> {
  return { ...under, ...pickInherited(over) };
}

/**
 * The configuration the task is created with: the job's own fields, else the template's
 * or source job's (`inherited`), else {@link SERVICE_DEFAULTS}.
 */
export function effectiveConfig(
  spec: Partial<InheritedConfig>,
  inherited: Partial<InheritedConfig>,
): Partial<InheritedConfig> {
  return overlayInherited(spec, overlayInherited(inherited, SERVICE_DEFAULTS));
}
