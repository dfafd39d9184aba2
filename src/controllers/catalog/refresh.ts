/**
 * When a connection's catalogs are read again: the memory of the catalog mirror (one
 * entry per connection: the last answer and when it was read, the reconcile-now
 * requests handled, the product codes objects were refused for) and the pure decision
 * {@link refreshDue}.
 */
import type { NasProduct } from "../../service/schemas/nas.js";
import type { TrainingProduct } from "../../service/schemas/training.js";

/** The shortest time between two reads caused by objects refused for an unknown code (default). */
export const REFUSAL_REFRESH_GAP_MS = 30_000;

/** The last catalogs read for one connection. */
export interface ReadCatalog {
  /** When they were read (ms since the epoch). */
  at: number;
  /** uid and generation of the ServiceConnection then ("" for the default connection). */
  connectionVersion: string;
  training: TrainingProduct[];
  nas: NasProduct[];
  /** nas-storage-available answers by `verdictKey` (mirror.ts). */
  available: Map<string, boolean>;
}

/** What the mirror remembers of one connection. */
export interface ConnectionMemory {
  read?: ReadCatalog;
  /** Reconcile-now values already handled, by object (`kind/name`). */
  handled: Map<string, string>;
  /** Product codes an object was refused for since the last read. */
  refusedCodes: Set<string>;
}

/** Why a refresh is due now, or when it will be. */
export type RefreshDecision =
  | { due: true; why: "first" | "interval" | "connectionChanged" | "requested" | "refusedCode" }
  | { due: false; inMs: number };

/** Inputs of {@link refreshDue}. */
export interface RefreshInput {
  memory: ConnectionMemory;
  now: number;
  intervalMs: number;
  connectionVersion: string;
  /** Reconcile-now values not handled yet. */
  pendingRequests: number;
  /** Default {@link REFUSAL_REFRESH_GAP_MS}. */
  refusalGapMs?: number;
}

/** Whether to read the catalogs now, and else when. */
export function refreshDue(input: RefreshInput): RefreshDecision {
  const { memory, now, intervalMs, refusalGapMs = REFUSAL_REFRESH_GAP_MS } = input;
  const read = memory.read;
  if (!read) return { due: true, why: "first" };
  if (read.connectionVersion !== input.connectionVersion) {
    return { due: true, why: "connectionChanged" };
  }
  if (input.pendingRequests > 0) return { due: true, why: "requested" };
  const age = now - read.at;
  if (age >= intervalMs) return { due: true, why: "interval" };
  if (memory.refusedCodes.size > 0) {
    if (age >= refusalGapMs) return { due: true, why: "refusedCode" };
    return { due: false, inMs: Math.min(refusalGapMs, intervalMs) - age };
  }
  return { due: false, inMs: intervalMs - age };
}

/** Whether `code` is in the last catalogs read (either kind). */
export function knowsCode(memory: ConnectionMemory, code: string): boolean {
  const read = memory.read;
  if (!read) return false;
  return (
    read.training.some((p) => p.productCode === code) ||
    read.nas.some((p) => p.productCode === code)
  );
}
