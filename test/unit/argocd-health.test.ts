import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import {
  ARGOCD_CM_PATCH,
  assembleHealthScript,
  COMMON_SOURCE,
  HEALTH_DIR,
  HEALTH_KINDS,
  healthKey,
} from "../../scripts/generate-argocd.js";
import { root } from "../../scripts/generated-files.js";
import { allCrds, ownReason, ownReasons, REASONS, ReasonTable } from "../../src/crds/index.js";
import { ARGO_HEALTH_STATUSES, runHealthScript } from "../support/lua.js";

/**
 * The Argo CD health checks, run in Lua 5.1 on sample objects. The scripts are taken
 * from the argocd-cm snippet users install, and must equal the .lua sources.
 */

type Condition = {
  type: string;
  status: string;
  reason: string;
  message?: string;
  observedGeneration?: number;
};

/** A sample object of `kind` at `generation` with the given status. */
function sample(kind: string, generation: number, status?: Record<string, unknown>) {
  return {
    apiVersion: "aidc.io/v1alpha1",
    kind,
    metadata: { name: "sample", namespace: "ml", generation },
    spec: {},
    ...(status ? { status } : {}),
  };
}

const ready = (status: string, reason: string, message = ""): Condition => ({
  type: "Ready",
  status,
  reason,
  message,
});
const synced = (status: string, reason: string, message = ""): Condition => ({
  type: "Synced",
  status,
  reason,
  message,
});

interface Case {
  reason: string;
  generation: number;
  status?: Record<string, unknown>;
  want: string;
  messageContains?: string;
}

/** Cases every kind answers the same way. */
const commonCases: Case[] = [
  { reason: "no status yet", generation: 1, want: "Progressing", messageContains: "reconcile" },
  {
    reason: "a status without conditions",
    generation: 1,
    status: { observedGeneration: 1 },
    want: "Progressing",
    messageContains: "report Ready",
  },
  {
    reason: "Ready=True at the current generation",
    generation: 3,
    status: {
      observedGeneration: 3,
      conditions: [
        ready("True", "Available", "remote resource is usable"),
        synced("True", "ReconcileSuccess"),
      ],
    },
    want: "Healthy",
    messageContains: "remote resource is usable",
  },
  {
    reason: "Ready=True observed for an older generation",
    generation: 4,
    status: { observedGeneration: 3, conditions: [ready("True", "Available")] },
    want: "Progressing",
    messageContains: "generation 4",
  },
  {
    reason: "Ready=True without status.observedGeneration",
    generation: 2,
    status: { conditions: [ready("True", "Available")] },
    want: "Progressing",
  },
  {
    reason: "Ready=False while the remote resource is created",
    generation: 1,
    status: {
      observedGeneration: 1,
      conditions: [ready("False", "Creating", "subscription pending")],
    },
    want: "Progressing",
    messageContains: "subscription pending",
  },
  {
    reason: "Synced=False with a retryable error",
    generation: 1,
    status: {
      observedGeneration: 1,
      conditions: [
        ready("False", "Creating"),
        synced("False", "ReconcileError", "503 from the service"),
      ],
    },
    want: "Progressing",
    messageContains: "503 from the service",
  },
  {
    reason: "Synced=False ReconcileTerminal (the service refused the request)",
    generation: 1,
    status: {
      observedGeneration: 1,
      conditions: [
        ready("False", "Creating"),
        synced("False", "ReconcileTerminal", "403 Forbidden"),
      ],
    },
    want: "Degraded",
    messageContains: "Synced is False (ReconcileTerminal): 403 Forbidden",
  },
  {
    reason: "Synced=False ApiKeyRefused (a 403, on every kind)",
    generation: 1,
    status: { observedGeneration: 1, conditions: [synced("False", "ApiKeyRefused", "403")] },
    want: "Degraded",
  },
  {
    reason: "a reason that only looks terminal but is not in the reason table",
    generation: 1,
    status: { observedGeneration: 1, conditions: [synced("False", "ShrinkRefused")] },
    want: "Progressing",
  },
  {
    reason: "a reason of the table that is not terminal (waiting for a reference)",
    generation: 1,
    status: { observedGeneration: 1, conditions: [synced("False", "NasVolumeNotReady")] },
    want: "Progressing",
  },
  {
    reason: "a terminal Synced=False wins over Ready=True",
    generation: 2,
    status: {
      observedGeneration: 2,
      conditions: [ready("True", "Available"), synced("False", "ReconcileTerminal", "refused")],
    },
    want: "Degraded",
  },
  {
    reason: "a terminal condition of an older generation (the spec was fixed since)",
    generation: 3,
    status: {
      observedGeneration: 2,
      conditions: [{ ...synced("False", "ReconcileTerminal", "refused"), observedGeneration: 2 }],
    },
    want: "Progressing",
    messageContains: "generation 3",
  },
  {
    reason: "a terminal reason on a True condition is not an error",
    generation: 1,
    status: { observedGeneration: 1, conditions: [ready("True", "RecoveredFromFailed")] },
    want: "Healthy",
  },
];

/** Cases of one kind only. */
const kindCases: Record<string, Case[]> = {
  TrainingJob: [
    {
      reason: "a finished task",
      generation: 1,
      status: {
        observedGeneration: 1,
        phase: "Succeeded",
        conditions: [ready("False", "Unavailable")],
      },
      want: "Healthy",
      messageContains: "finished",
    },
    {
      reason: "a failed task",
      generation: 1,
      status: {
        observedGeneration: 1,
        phase: "Failed",
        conditions: [ready("False", "Unavailable", "OOM")],
      },
      want: "Degraded",
      messageContains: "OOM",
    },
    {
      reason: "a stopped task",
      generation: 1,
      status: {
        observedGeneration: 1,
        phase: "Stopped",
        conditions: [ready("False", "Unavailable")],
      },
      want: "Suspended",
    },
    {
      reason: "a running task",
      generation: 1,
      status: { observedGeneration: 1, phase: "Running", conditions: [ready("True", "Available")] },
      want: "Healthy",
    },
  ],
  NasVolume: [
    {
      reason:
        "a paused storage (Synced=False ReconcilePaused), even with Ready=True and a newer spec",
      generation: 3,
      status: {
        observedGeneration: 2,
        phase: "Ready",
        conditions: [
          ready("True", "Available"),
          { ...synced("False", "ReconcilePaused", "paused"), observedGeneration: 3 },
        ],
      },
      want: "Suspended",
      messageContains: "(ReconcilePaused): paused",
    },
    {
      reason: "a paused storage whose Ready keeps a terminal reason (a person must act either way)",
      generation: 1,
      status: {
        observedGeneration: 1,
        conditions: [
          ready("False", "ProductNotFoundRefused"),
          synced("False", "ReconcilePaused", "paused"),
        ],
      },
      want: "Degraded",
      messageContains: "(ProductNotFoundRefused)",
    },
    {
      reason: "a failed storage",
      generation: 1,
      status: {
        observedGeneration: 1,
        phase: "Failed",
        conditions: [ready("False", "Unavailable")],
      },
      want: "Degraded",
    },
    {
      reason: "a storage being scaled",
      generation: 2,
      status: { observedGeneration: 2, phase: "Scaling", conditions: [ready("False", "Scaling")] },
      want: "Progressing",
    },
  ],
  CciInstance: [
    {
      reason: "an instance in ERROR",
      generation: 1,
      status: {
        observedGeneration: 1,
        remoteStatus: "ERROR",
        conditions: [ready("False", "Unavailable", "volume could not be created")],
      },
      want: "Degraded",
      messageContains: "volume could not be created",
    },
    {
      reason: "a STOPPED instance",
      generation: 1,
      status: {
        observedGeneration: 1,
        remoteStatus: "STOPPED",
        conditions: [ready("False", "Unavailable")],
      },
      want: "Suspended",
    },
    {
      reason: "a RUNNING instance",
      generation: 1,
      status: {
        observedGeneration: 1,
        remoteStatus: "RUNNING",
        conditions: [ready("True", "Available")],
      },
      want: "Healthy",
    },
  ],
  TrainingTemplate: [],
};

const patch = parse(readFileSync(join(root, ARGOCD_CM_PATCH), "utf8")) as {
  metadata: { name: string };
  data: Record<string, string>;
};

describe("the Argo CD health checks", () => {
  it("ship one argocd-cm key per kind, equal to its .lua file", () => {
    expect(patch.metadata.name).toBe("argocd-cm");
    expect(Object.keys(patch.data)).toEqual(
      HEALTH_KINDS.map((crd) => healthKey(crd.group, crd.kind)),
    );
    for (const crd of HEALTH_KINDS) {
      const source = readFileSync(join(root, HEALTH_DIR, `${crd.kind.toLowerCase()}.lua`), "utf8");
      expect(patch.data[healthKey(crd.group, crd.kind)]).toBe(source);
    }
  });

  for (const crd of HEALTH_KINDS) {
    const script = patch.data[healthKey(crd.group, crd.kind)] ?? "";
    // Every Terminal reason of the kind's table, on Ready and on Synced, is Degraded.
    const terminalCases: Case[] = REASONS.reasonsOf(crd.kind, "Terminal").flatMap((r) =>
      [ready, synced].map((cond) => ({
        reason: `${cond("False", r).type}=False ${r} (Terminal in src/crds/reasons.ts)`,
        generation: 1,
        status: { observedGeneration: 1, conditions: [cond("False", r, "why")] },
        want: "Degraded",
        messageContains: `(${r}): why`,
      })),
    );
    // Every Resting reason of the kind on Ready=False is Suspended.
    const restingCases: Case[] = REASONS.reasonsOf(crd.kind, "Resting").map((r) => ({
      reason: `Ready=False ${r} (Resting in the reason table)`,
      generation: 1,
      status: { observedGeneration: 1, conditions: [ready("False", r, "stopped")] },
      want: "Suspended",
      messageContains: `(${r}): stopped`,
    }));
    describe(`of ${crd.kind}`, () => {
      const cases = [
        ...commonCases,
        ...terminalCases,
        ...restingCases,
        ...(kindCases[crd.kind] ?? []),
      ];
      for (const c of cases) {
        it(`report ${c.want} for ${c.reason}`, () => {
          const got = runHealthScript(script, sample(crd.kind, c.generation, c.status));
          expect(ARGO_HEALTH_STATUSES).toContain(got.status);
          expect(got.status).toBe(c.want);
          expect(got.message.length).toBeGreaterThan(0);
          if (c.messageContains) expect(got.message).toContain(c.messageContains);
        });
      }
    });
  }

  it("are generated for any kind from the reason table and its definition, nothing by hand", () => {
    const common = readFileSync(join(root, COMMON_SOURCE), "utf8");
    const widget = {
      group: "aidc.io" as const,
      kind: "Widget",
      remote: "managed" as const,
      reasons: ownReasons({
        WidgetBent: ownReason("Terminal", ["Ready"], "bent"),
        WidgetParked: ownReason("Resting", ["Ready"], "parked"),
      }),
      health: {
        field: "wound",
        states: { Jammed: { health: "Degraded" as const, message: 'The "widget" jammed' } },
      },
    };
    const script = assembleHealthScript(widget, common, new ReasonTable([...allCrds, widget]));
    expect(script).toMatch(/^-- Generated by scripts\/generate-argocd.ts/);
    expect(script).not.toMatch(/@[A-Z_]+@/);
    const judge = (status: Record<string, unknown>) =>
      runHealthScript(script, sample("Widget", 1, { observedGeneration: 1, ...status }));
    // The shared reasons of its groups reach a kind the shared table does not name.
    expect(judge({ conditions: [synced("False", "ApiKeyRefused")] }).status).toBe("Degraded");
    expect(judge({ conditions: [ready("False", "CreateFailed")] }).status).toBe("Degraded");
    // Its own reasons and states.
    expect(judge({ conditions: [ready("False", "WidgetBent")] }).status).toBe("Degraded");
    expect(judge({ conditions: [ready("False", "WidgetParked")] }).status).toBe("Suspended");
    expect(judge({ wound: "Jammed", conditions: [ready("False", "Unavailable", "x")] })).toEqual({
      status: "Degraded",
      message: 'The "widget" jammed: x',
    });
    expect(judge({ wound: "Fine", conditions: [ready("True", "Available")] }).status).toBe(
      "Healthy",
    );
    // Another kind's script does not know them.
    const nas = patch.data[healthKey("aidc.io", "NasVolume")] ?? "";
    const other = runHealthScript(
      nas,
      sample("NasVolume", 1, { observedGeneration: 1, conditions: [ready("False", "WidgetBent")] }),
    );
    expect(other.status).toBe("Progressing");
  });

  it("report an object being deleted as Progressing, as Argo CD itself does", () => {
    for (const crd of HEALTH_KINDS) {
      const obj = sample(crd.kind, 1, {
        observedGeneration: 1,
        conditions: [ready("True", "Available")],
      });
      const deleting = {
        ...obj,
        metadata: { ...obj.metadata, deletionTimestamp: "2026-01-01T00:00:00Z" },
      };
      const got = runHealthScript(patch.data[healthKey(crd.group, crd.kind)] ?? "", deleting);
      expect(got).toEqual({ status: "Progressing", message: "Pending deletion" });
    }
  });

  it("run in a Lua 5.1 interpreter that refuses Lua 5.3 syntax, as Argo CD's VM does", () => {
    expect(() => runHealthScript("local x = 7 // 2\nreturn { status = 'Healthy' }", {})).toThrow(
      /health script failed/,
    );
  });

  it("run without the io and os libraries, as Argo CD runs them", () => {
    expect(() => runHealthScript("os.exit(0)\nreturn { status = 'Healthy' }", {})).toThrow(
      /health script failed/,
    );
  });
});
