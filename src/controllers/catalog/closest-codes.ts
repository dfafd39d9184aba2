/**
 * The product codes closest to one the catalog lacks, for the refusal message of a
 * TrainingJob or NasVolume: a few codes, not the whole catalog, so that the message
 * stays short with a real catalog. Pure.
 */
import { editDistance } from "../../runtime/edit-distance.js";

/** How many codes a refusal names. */
export const CLOSEST_CODES = 5;

/** A code of the catalog and the compute center it is offered in (when known). */
export interface CatalogCode {
  code: string;
  aidcId?: number;
}

/** The codes closest to a given one, and how many other codes the catalog has. */
export interface ClosestCodes {
  closest: string[];
  others: number;
}

/**
 * Up to `limit` distinct codes of `catalog` closest to `given`: those of compute center
 * `aidcId` first (when given), then by edit distance ignoring case, then by name.
 * `others` counts the distinct codes left out.
 */
export function closestCodes(
  given: string,
  catalog: readonly CatalogCode[],
  aidcId?: number,
  limit = CLOSEST_CODES,
): ClosestCodes {
  const best = new Map<string, { sameCenter: boolean; distance: number }>();
  const target = given.toLowerCase();
  for (const { code, aidcId: center } of catalog) {
    const sameCenter = aidcId !== undefined && center === aidcId;
    const seen = best.get(code);
    if (seen && (seen.sameCenter || !sameCenter)) continue;
    best.set(code, { sameCenter, distance: editDistance(target, code.toLowerCase()) });
  }
  const ranked = [...best.entries()].sort(
    ([a, x], [b, y]) =>
      Number(y.sameCenter) - Number(x.sameCenter) ||
      x.distance - y.distance ||
      (a < b ? -1 : a > b ? 1 : 0),
  );
  const closest = ranked.slice(0, limit).map(([code]) => code);
  return { closest, others: ranked.length - closest.length };
}

/**
 * The part of a refusal that names the closest codes, e.g. `closest: a, b (and 12 more);
 * list them with kubectl get trainingproducts` (`listCommand`), or that the catalog
 * lists none.
 */
export function closestCodesText(found: ClosestCodes, listCommand: string): string {
  if (found.closest.length === 0) return "the catalog lists no product";
  const more = found.others > 0 ? ` (and ${found.others} more)` : "";
  return `closest: ${found.closest.join(", ")}${more}; list them with ${listCommand}`;
}
