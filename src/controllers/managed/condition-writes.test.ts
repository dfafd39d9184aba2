import { describe, expect, it } from "vitest";
import { RetryableError, TerminalError } from "../../runtime/errors.js";
import { EndpointDisabledError, ServiceAuthError } from "../../service/errors.js";
import { heldReadyCondition, syncedConditionOf } from "./condition-writes.js";

describe("syncedConditionOf", () => {
  const cases: { reason: string; err: unknown; want: { reason: string; message: string } }[] = [
    {
      reason: "a retryable error without a reason is a ReconcileError",
      err: new Error("socket hang up"),
      want: { reason: "ReconcileError", message: "socket hang up" },
    },
    {
      reason: "an error's own reason is kept when it is one of the reason table",
      err: new RetryableError("NasVolumeNotReady", "NasVolume data is not Ready yet"),
      want: { reason: "NasVolumeNotReady", message: "NasVolume data is not Ready yet" },
    },
    {
      reason: "a reason outside the reason table becomes ReconcileError by its class",
      err: new RetryableError("Conflict", "the object changed"),
      want: { reason: "ReconcileError", message: "the object changed" },
    },
    {
      reason: "a refused API key is ApiKeyRefused",
      err: new ServiceAuthError("403 from getNas", { code: 403, endpoint: "getNas" }),
      want: { reason: "ApiKeyRefused", message: "403 from getNas" },
    },
    {
      reason: "a terminal error keeps its reason",
      err: new TerminalError("CapacityRefused", "too big"),
      want: { reason: "CapacityRefused", message: "too big" },
    },
    {
      reason: "a terminal service error without a reason is ReconcileTerminal",
      err: new EndpointDisabledError("deleteNas"),
      want: {
        reason: "ReconcileTerminal",
        message: new EndpointDisabledError("deleteNas").message,
      },
    },
  ];
  for (const c of cases) {
    it(c.reason, () => {
      expect(syncedConditionOf(c.err)).toEqual({ type: "Synced", status: "False", ...c.want });
    });
  }
});

describe("heldReadyCondition", () => {
  const refused = new ServiceAuthError("GET /x was refused with status 403", {
    endpoint: "getNas",
    code: 403,
  });
  const wrapped = new TerminalError("ApiKeyRefused", "cannot observe: refused", {
    cause: refused,
  });
  const ready = (status: "True" | "False" | "Unknown") => ({
    type: "Ready",
    status,
    reason: "Available",
    message: "",
    lastTransitionTime: "2026-11-23T00:00:00Z",
  });
  const cases: {
    reason: string;
    err: unknown;
    previous?: ReturnType<typeof ready>;
    want: string | undefined;
  }[] = [
    {
      reason: "a refused key turns Ready=True into Unknown",
      err: refused,
      previous: ready("True"),
      want: "Unknown",
    },
    { reason: "a new object gets Ready=False", err: refused, want: "False" },
    {
      reason: "a not-ready object stays False, with the hold's reason",
      err: wrapped,
      previous: ready("False"),
      want: "False",
    },
    {
      reason: "a wrapped external hold counts as one",
      err: wrapped,
      previous: ready("True"),
      want: "Unknown",
    },
    {
      reason: "a spec refusal leaves Ready alone",
      err: new TerminalError("CapacityRefused", "too big"),
      previous: ready("True"),
      want: undefined,
    },
    {
      reason: "a retryable failure leaves Ready alone",
      err: new RetryableError("ReconcileError", "503"),
      previous: ready("True"),
      want: undefined,
    },
  ];
  for (const c of cases) {
    it(c.reason, () => {
      const got = heldReadyCondition(c.err, c.previous);
      expect(got?.status).toBe(c.want);
      if (c.want) expect(got).toMatchObject({ type: "Ready", reason: "ApiKeyRefused" });
    });
  }
});
