/**
 * The printer columns of `kubectl get` that the kinds share: every kind shows its own
 * columns, then the condition columns (READY, SYNCED, REASON), then AGE, then the
 * columns shown only with `-o wide` ({@link kindColumns}). The pieces several kinds
 * show (a phase, an id of the service) are built here, so that their header, type and
 * wording stay the same from kind to kind.
 */
import { conditionColumns, type PrinterColumn } from "./definition.js";

/** AGE: time since the object was created, as every built-in kind shows it. */
export const ageColumn: PrinterColumn = {
  name: "Age",
  type: "date",
  jsonPath: ".metadata.creationTimestamp",
  description: "Time since the object was created.",
};

/** A column showing the status field `field` (a top-level field of the status). */
export function statusColumn(
  name: string,
  type: PrinterColumn["type"],
  field: string,
  description: string,
): PrinterColumn {
  return { name, type, jsonPath: `.status.${field}`, description };
}

/** PHASE: `status.phase` of a kind that has one, e.g. `Phase of the volume.` */
export function phaseColumn(what: string): PrinterColumn {
  return statusColumn("Phase", "string", "phase", `Phase of the ${what}.`);
}

/** An id of the service the status holds, e.g. `Volume-ID` of `status.volumeId`. */
export function serviceIdColumn(name: string, field: string, what: string): PrinterColumn {
  return statusColumn(name, "string", field, `Id of the ${what} in the service.`);
}

/** What a kind shows in `kubectl get` besides the columns every kind shows. */
export interface KindColumns {
  /** The kind's own columns, shown first. */
  shown: readonly PrinterColumn[];
  /** What the Ready condition means for the kind (the READY column's description). */
  readyMeaning: string;
  /** Columns shown only with `-o wide` (their priority is set to 1). */
  wide?: readonly PrinterColumn[];
}

/**
 * A kind's printer columns, in the order every kind has them: its own columns, READY,
 * SYNCED and REASON ({@link conditionColumns}), AGE, then its `-o wide` columns.
 */
export function kindColumns({ shown, readyMeaning, wide = [] }: KindColumns): PrinterColumn[] {
  return [
    ...shown,
    ...conditionColumns(readyMeaning),
    { ...ageColumn },
    ...wide.map((c) => ({ ...c, priority: 1 })),
  ];
}
