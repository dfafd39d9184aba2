import { describe, expect, it } from "vitest";
import { REASONS } from "../../crds/index.js";
import { RetryableError, TerminalError, WriteNotKeptError } from "../../runtime/errors.js";
import {
  ServiceAuthError,
  ServiceOperationMissingError,
  ServiceReadRefusedError,
  ServiceRedirectError,
  ServiceResultShapeError,
} from "../../service/errors.js";
import { ObjectStorageCredentialsError } from "../../service/object-storage-errors.js";
import { retryableError } from "../event-reasons.js";
import { heldReadyCondition } from "./condition-writes.js";

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

describe("a wait for a ServiceConnection", () => {
  it("is written on Synced alone, as the reason table lists it (docs/troubleshooting.md)", () => {
    const wait = retryableError("ConnectionNotFound", "no connection", { waiting: true });
    expect(heldReadyCondition(wait, undefined)).toBeUndefined();
    expect(REASONS.entry("ConnectionNotFound")?.conditions).toEqual(["Synced"]);
  });
});

describe("the reasons an external hold writes on Ready", () => {
  const details = { endpoint: "getNas", code: 400 };
  // Every service error that holds an object for a reason outside it.
  const holds = [
    new ServiceAuthError("refused key", details),
    new ServiceRedirectError("redirected", details),
    new ServiceReadRefusedError("read refused", details),
    new ServiceOperationMissingError("no operation", details),
    new ServiceResultShapeError("unknown shape", details),
    new ObjectStorageCredentialsError("refused credentials", details),
    new WriteNotKeptError("annotation update", ["annotation aidc.io/create-pending"]),
  ];
  for (const err of holds) {
    it(`lists ${err.reason} on Ready in the reason table (docs/troubleshooting.md)`, () => {
      const ready = heldReadyCondition(err, undefined);
      expect(ready?.reason).toBe(err.reason);
      expect(REASONS.entry(err.reason)?.conditions).toContain("Ready");
    });
  }
});
