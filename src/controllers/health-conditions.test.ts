import { describe, expect, it } from "vitest";
import { HOLD_RETRY_NOTE, RetryableError, TerminalError } from "../runtime/errors.js";
import {
  EndpointDisabledError,
  ServiceAuthError,
  ServiceReadRefusedError,
} from "../service/errors.js";
import { ServiceProxyError } from "../service/service-proxy.js";
import { failedSyncCondition } from "./health-conditions.js";

describe("failedSyncCondition", () => {
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
      reason: "a refused API key is ApiKeyRefused, tried again on the hold backoff",
      err: new ServiceAuthError("403 from getNas", { code: 403, endpoint: "getNas" }),
      want: { reason: "ApiKeyRefused", message: `403 from getNas; ${HOLD_RETRY_NOTE}` },
    },
    {
      reason: "a proxy the service's calls cannot take is ProxyUnsupported, held (no retry helps)",
      err: new ServiceProxyError(
        'the proxy of the service (HTTPS_PROXY): unsupported proxy scheme "socks4": http, https or socks5',
      ),
      want: {
        reason: "ProxyUnsupported",
        message:
          'the proxy of the service (HTTPS_PROXY): unsupported proxy scheme "socks4": http, https or socks5',
      },
    },
    {
      reason: "a refused read is ReadRefused, read again on the hold backoff",
      err: new ServiceReadRefusedError("GET /x refused with status 400", {
        code: 400,
        endpoint: "getNas",
      }),
      want: {
        reason: "ReadRefused",
        message: `GET /x refused with status 400; ${HOLD_RETRY_NOTE}`,
      },
    },
    {
      reason: "a refused read wrapped as retryable says no hold: its wrapper says its retry",
      err: new RetryableError(
        "ReadRefused",
        "GET /x refused with status 400; absent from the list, looking again",
        {
          cause: new ServiceReadRefusedError("GET /x refused with status 400", {
            code: 400,
            endpoint: "getNas",
          }),
        },
      ),
      want: {
        reason: "ReadRefused",
        message: "GET /x refused with status 400; absent from the list, looking again",
      },
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
      expect(failedSyncCondition(c.err)).toEqual({ type: "Synced", status: "False", ...c.want });
    });
  }

  it("says of a held object that a new API key or a change of its connection retries it at once, as troubleshooting.md tells the user", () => {
    const { message } = failedSyncCondition(
      new ServiceAuthError("403 from getNas", { code: 403, endpoint: "getNas" }),
    );
    expect(message).toContain("at once when the object, its API key or its connection changes");
  });
});
