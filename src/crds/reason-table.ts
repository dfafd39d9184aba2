/**
 * The whole reason table of a set of kinds: the shared rows (reasons.ts) with their kind
 * groups resolved, and each kind's own `reasons`. src/crds/index.ts builds `REASONS`, read
 * by the controllers, the Argo CD generator and docs/conditions.md, and the kstatus
 * conditions derive from it.
 */
import type { CrdDefinition } from "./definition.js";
import { CONDITION_REASONS, type ReasonEntry, type ReasonState } from "./reasons.js";

/** A row of the table, with the kinds that write it named. */
export interface KindReasonEntry extends Omit<ReasonEntry, "kinds"> {
  kinds: readonly string[];
  /** The group of a shared row, unless the kinds join it. */
  group?: "every kind" | "service kinds" | "managed kinds";
}

/** What the table must know of a kind. */
export type ReasonTableKind = Pick<CrdDefinition, "kind" | "remote" | "reasons" | "sharedReasons">;

/** The parts of a condition the kstatus derivation reads. */
export interface ConditionView {
  type: string;
  status: string;
  reason: string;
  message: string;
}

/** A kstatus condition to set (always status True). */
export interface KstatusCondition {
  type: "Reconciling" | "Stalled";
  status: "True";
  reason: string;
  message: string;
}

const KSTATUS_TYPES: readonly string[] = ["Reconciling", "Stalled"];

/** The conditions whose Terminal reason stalls the object. */
const STALLING_TYPES = ["Ready", "Synced"];

function describeCondition(c: ConditionView): string {
  return `${c.type} is ${c.status}${c.message ? `: ${c.message}` : ""}`;
}

export class ReasonTable {
  private readonly rows = new Map<string, KindReasonEntry>();

  /**
   * Throws when a kind declares a reason the shared table or another kind has, or joins
   * a shared row that is not in the table, that applies to a group, or twice.
   */
  constructor(kinds: readonly ReasonTableKind[]) {
    const every = kinds.map((k) => k.kind);
    const service = kinds.filter((k) => k.remote !== "none").map((k) => k.kind);
    const managed = kinds.filter((k) => k.remote === "managed").map((k) => k.kind);
    for (const [reason, e] of Object.entries(CONDITION_REASONS) as [string, ReasonEntry][]) {
      if (e.kinds === "joining kinds") {
        this.rows.set(reason, { ...e, kinds: [] });
        continue;
      }
      const groups = { "every kind": every, "service kinds": service, "managed kinds": managed };
      this.rows.set(reason, { ...e, group: e.kinds, kinds: groups[e.kinds] });
    }
    for (const k of kinds) {
      for (const reason of k.sharedReasons ?? []) {
        const row = this.rows.get(reason);
        if (!row) throw new Error(`${k.kind} joins reason ${reason}, which is not shared`);
        if (row.group) {
          throw new Error(`${k.kind} joins reason ${reason}, which applies to ${row.group}`);
        }
        if (row.kinds.includes(k.kind)) {
          throw new Error(`${k.kind} joins reason ${reason}, which names it already`);
        }
        this.rows.set(reason, { ...row, kinds: [...row.kinds, k.kind] });
      }
    }
    for (const k of kinds) {
      for (const [reason, e] of Object.entries(k.reasons?.entries ?? {})) {
        const other = this.rows.get(reason);
        if (other) {
          throw new Error(
            `reason ${reason} of ${k.kind} is already in the reason table (${other.kinds.join(", ")})`,
          );
        }
        this.rows.set(reason, { ...e, kinds: [k.kind] });
      }
    }
  }

  /** The row of `reason`; undefined for a string that is not one of ours. */
  entry(reason: string): KindReasonEntry | undefined {
    return this.rows.get(reason);
  }

  stateOf(reason: string): ReasonState | undefined {
    return this.rows.get(reason)?.state;
  }

  /**
   * The kstatus condition (read by Flux, kpt, `kubectl wait`; present only when True)
   * that `conditions` imply: `Stalled` when Ready or Synced is not True with a Terminal
   * reason (a person must act), else `Reconciling` when any has an UnderWay reason, each
   * with that reason; else none, and kstatus reads Ready.
   */
  kstatusCondition(conditions: readonly ConditionView[]): KstatusCondition | undefined {
    const others = conditions.filter((c) => !KSTATUS_TYPES.includes(c.type));
    const stalled = STALLING_TYPES.map((t) => others.find((c) => c.type === t)).find(
      (c) => c && c.status !== "True" && this.stateOf(c.reason) === "Terminal",
    );
    if (stalled) {
      return {
        type: "Stalled",
        status: "True",
        reason: stalled.reason,
        message: describeCondition(stalled),
      };
    }
    const busy = others.find((c) => this.stateOf(c.reason) === "UnderWay");
    if (busy) {
      return {
        type: "Reconciling",
        status: "True",
        reason: busy.reason,
        message: describeCondition(busy),
      };
    }
    return undefined;
  }

  has(reason: string): boolean {
    return this.rows.has(reason);
  }

  /** True when `reason` is Terminal: retrying will not help, a person must act. */
  isTerminal(reason: string): boolean {
    return this.stateOf(reason) === "Terminal";
  }

  /** The reasons in `state` that `kind` writes, sorted (e.g. the Argo CD scripts' lists). */
  reasonsOf(kind: string, state: ReasonState): string[] {
    return [...this.rows]
      .filter(([, e]) => e.state === state && e.kinds.includes(kind))
      .map(([r]) => r)
      .sort();
  }

  /** Every row, the shared table's first, then each kind's own in the order of the kinds. */
  entries(): [string, KindReasonEntry][] {
    return [...this.rows];
  }
}
