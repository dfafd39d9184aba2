import { describe, expect, it } from "vitest";
import { RetryableError } from "../../runtime/errors.js";
import {
  ServiceAuthError,
  ServiceOperationMissingError,
  ServiceReadRefusedError,
  ServiceRedirectError,
  ServiceUnavailableError,
} from "../../service/errors.js";
import { ServiceProxyError } from "../../service/service-proxy.js";
import { inUseCondition, readyConditionOf } from "./status.js";

describe("readyConditionOf", () => {
  it.each([
    {
      reason: "an accepted call is Connected",
      check: { outcome: "accepted" as const, baseUrl: "https://svc" },
      want: { status: "True", reason: "Connected" },
    },
    {
      reason: "an unreadable Secret says what is missing",
      check: { outcome: "secretUnreadable" as const, problem: "the Secret ops/k does not exist" },
      want: {
        status: "False",
        reason: "SecretUnreadable",
        message: "the Secret ops/k does not exist",
      },
    },
    {
      reason: "a web identity without the operator's token file says so",
      check: { outcome: "webIdentityUnavailable" as const, problem: "no projected token" },
      want: { status: "False", reason: "WebIdentityUnavailable", message: "no projected token" },
    },
    {
      reason: "a 403 is the key refused",
      check: {
        outcome: "failed" as const,
        error: new ServiceAuthError("403 Forbidden", { endpoint: "listCci", code: 403 }),
      },
      want: { status: "False", reason: "ApiKeyRefused" },
    },
    {
      reason: "a redirect is no refused key: the base URL is to fix",
      check: {
        outcome: "failed" as const,
        error: new ServiceRedirectError(
          'GET /v1/cci/instance/list answered with a redirect (HTTP 302) to "https://login.example"',
          {
            endpoint: "listCci",
            code: 302,
          },
        ),
      },
      want: { status: "False", reason: "CheckRefused" },
    },
    {
      reason: "a bare 404 (no such path) is no refused key either",
      check: {
        outcome: "failed" as const,
        error: new ServiceOperationMissingError("GET /v1/cci/instance/list answered HTTP 404", {
          endpoint: "listCci",
          code: 404,
        }),
      },
      want: { status: "False", reason: "CheckRefused" },
    },
    {
      reason: "a refused read is checked again every poll, not on a slow backoff",
      check: {
        outcome: "failed" as const,
        error: new ServiceReadRefusedError(
          "GET /v1/cci/instance/list was refused by the service with status 400: try later",
          { endpoint: "listCci", code: 400 },
        ),
      },
      want: {
        status: "False",
        reason: "CheckRefused",
        message:
          "the service refused the authenticated check call, not for the key: GET /v1/cci/instance/list was refused by the service with status 400: try later; checked again every poll",
      },
    },
    {
      reason: "a proxy the connection's calls cannot take holds it: no call is made",
      check: {
        outcome: "failed" as const,
        error: new ServiceProxyError(
          'the proxy of the service (HTTPS_PROXY): unsupported proxy scheme "ftp": http, https or socks5',
        ),
      },
      want: {
        status: "False",
        reason: "ProxyUnsupported",
        message:
          'no call is made to the service: the proxy of the service (HTTPS_PROXY): unsupported proxy scheme "ftp": http, https or socks5',
      },
    },
    {
      reason: "a 5xx is a passing failure",
      check: {
        outcome: "failed" as const,
        error: new ServiceUnavailableError("503", { endpoint: "listCci", code: 503 }),
      },
      want: { status: "False", reason: "ServiceUnreachable" },
    },
    {
      reason: "a network failure is a passing failure",
      check: { outcome: "failed" as const, error: new RetryableError("ReconcileError", "reset") },
      want: { status: "False", reason: "ServiceUnreachable" },
    },
  ])("$reason", ({ check, want }) => {
    expect(readyConditionOf(check)).toMatchObject({ type: "Ready", ...want });
  });
});

describe("inUseCondition", () => {
  it("counts the users and names the first five", () => {
    const users = Array.from({ length: 7 }, (_, i) => ({
      kind: "NasVolume",
      metadata: { namespace: "team", name: `n${i}` },
    }));
    const c = inUseCondition(users);
    expect(c).toMatchObject({ type: "Ready", status: "False", reason: "InUse" });
    expect(c.message).toContain("7 object(s) still use this connection");
    expect(c.message).toContain("NasVolume team/n4 and 2 more");
    expect(c.message).not.toContain("team/n5");
  });

  it("asks only for what the CRD allows: deleting the users, not repointing them (connectionRef is immutable)", () => {
    const c = inUseCondition([{ kind: "NasVolume", metadata: { namespace: "team", name: "n" } }]);
    expect(c.message).toMatch(/; delete them first \(.*spec\.connectionRef cannot change\)$/);
    expect(c.message).not.toContain("point them at another connection");
  });
});
