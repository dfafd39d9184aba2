import { describe, expect, it } from "vitest";
import { z } from "zod";
import { isExternalHold } from "../runtime/errors.js";
import {
  ServiceAuthError,
  ServiceMalformedResponseError,
  ServiceNotFoundError,
  ServiceReadRefusedError,
  ServiceRefusedError,
  ServiceRequestTooLargeError,
  ServiceUnavailableError,
} from "./errors.js";
import { interpretResponse } from "./transport.js";
import type { CallDescription } from "./transport-errors.js";

const read: CallDescription = {
  endpoint: "getNas",
  method: "GET",
  where: "GET /v1/nasStorage/instance/n1/detail",
  idempotent: true,
};
const create: CallDescription = {
  endpoint: "subscribeNas",
  method: "POST",
  where: "POST /v1/subscription/nasStorage/create",
  idempotent: false,
};
const env = (status: number, message: string, data: unknown = {}) =>
  JSON.stringify({ status, message, data });
const dataSchema = z.object({ id: z.string() });

describe("interpretResponse", () => {
  it("returns the parsed data of a 200 envelope", () => {
    expect(
      interpretResponse(
        read,
        { httpStatus: 200, bodyText: env(200, "OK", { id: "n1" }) },
        dataSchema,
      ),
    ).toEqual({
      id: "n1",
    });
  });

  it("accepts an envelope status written as a string", () => {
    const body = JSON.stringify({ status: "200", message: "OK", data: { id: "n1" } });
    expect(interpretResponse(read, { httpStatus: 200, bodyText: body }, dataSchema)).toEqual({
      id: "n1",
    });
  });

  it.each([
    {
      reason: "a 500 envelope on HTTP 200 is retryable",
      raw: { httpStatus: 200, bodyText: env(500, "Internal Server Error") },
      type: ServiceUnavailableError,
      code: 500,
      retryable: true,
    },
    {
      reason: "a 403 envelope on HTTP 200 is an auth error",
      raw: { httpStatus: 200, bodyText: env(403, "Forbidden") },
      type: ServiceAuthError,
      code: 403,
      retryable: false,
    },
    {
      reason: "a validation refusal on HTTP 200 is terminal",
      raw: { httpStatus: 200, bodyText: env(400, "priority must be 1..3") },
      type: ServiceRefusedError,
      code: 400,
      retryable: false,
    },
    {
      reason: "a 404 envelope means the resource is gone",
      raw: { httpStatus: 200, bodyText: env(404, "NAS n1 not found") },
      type: ServiceNotFoundError,
      code: 404,
      retryable: false,
    },
    {
      reason: "a 429 envelope is retryable",
      raw: { httpStatus: 429, bodyText: env(429, "Too Many Requests") },
      type: ServiceUnavailableError,
      code: 429,
      retryable: true,
    },
    {
      reason: "an HTML 502 from a proxy is retryable",
      raw: { httpStatus: 502, bodyText: "<html>Bad Gateway</html>" },
      type: ServiceUnavailableError,
      code: 502,
      retryable: true,
    },
    {
      reason: "a 200 envelope with HTTP 503 is retryable",
      raw: { httpStatus: 503, bodyText: env(200, "OK", { id: "n1" }) },
      type: ServiceUnavailableError,
      code: 503,
      retryable: true,
    },
    {
      reason: "a 2xx body that is not JSON is malformed",
      raw: { httpStatus: 200, bodyText: '{"status":200,"data":{' },
      type: ServiceMalformedResponseError,
      code: 200,
      retryable: true,
    },
    {
      reason: "JSON without an envelope status is malformed",
      raw: { httpStatus: 200, bodyText: JSON.stringify({ id: "n1" }) },
      type: ServiceMalformedResponseError,
      code: 200,
      retryable: true,
    },
  ])("$reason", ({ raw, type, code, retryable }) => {
    let caught: unknown;
    try {
      interpretResponse(read, raw, dataSchema);
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(type);
    expect(caught).toMatchObject({ code, retryable, endpoint: "getNas" });
  });

  it("puts the service's message into a refusal", () => {
    expect(() =>
      interpretResponse(
        read,
        { httpStatus: 200, bodyText: env(400, "mountPath must match the pattern") },
        dataSchema,
      ),
    ).toThrow(/refused by the service with status 400: mountPath must match the pattern/);
  });

  it("holds a refused read for a slow retry (ReadRefused), but a refused write until the spec changes", () => {
    const refusal = (call: CallDescription) => {
      try {
        interpretResponse(call, { httpStatus: 200, bodyText: env(409, "busy") }, dataSchema);
      } catch (err) {
        return err;
      }
      throw new Error("expected a refusal");
    };
    const read409 = refusal(read);
    expect(read409).toBeInstanceOf(ServiceReadRefusedError);
    expect(read409).toMatchObject({ reason: "ReadRefused", retryable: false, code: 409 });
    expect(isExternalHold(read409)).toBe(true);
    expect((read409 as Error).message).toMatch(/status 409: busy$/);
    const create409 = refusal(create);
    expect(create409).toBeInstanceOf(ServiceRefusedError);
    expect(create409).not.toBeInstanceOf(ServiceReadRefusedError);
    expect(isExternalHold(create409)).toBe(false);
  });

  it("holds a create a front refused as too large (bare 413) for a slow retry, naming the limit and the body's size", () => {
    const html = "<html><head><title>413 Request Entity Too Large</title></head></html>";
    const refused = (() => {
      try {
        interpretResponse(
          { ...create, bodyBytes: 312 },
          { httpStatus: 413, bodyText: html },
          dataSchema,
        );
      } catch (err) {
        return err;
      }
      throw new Error("expected a refusal");
    })();
    expect(refused).toBeInstanceOf(ServiceRequestTooLargeError);
    expect(refused).toMatchObject({ reason: "RequestTooLarge", retryable: false, code: 413 });
    expect(isExternalHold(refused)).toBe(true);
    expect((refused as Error).message).toBe(
      "POST /v1/subscription/nasStorage/create was refused with HTTP 413: Content Too Large without a service envelope: a proxy or gateway in front of the service limits the size of the request body of 312 bytes (e.g. nginx client_max_body_size); raise its limit",
    );
    // The service's own 413 (in its envelope) stays the service's refusal of the request.
    expect(() =>
      interpretResponse(create, { httpStatus: 200, bodyText: env(413, "too big") }, dataSchema),
    ).toThrow(expect.not.objectContaining({ reason: "RequestTooLarge" }));
  });

  it("says that a bare 502 or 504 is a front's, which could not reach the service or timed out waiting for it, retried", () => {
    const failure = (call: CallDescription, httpStatus: number, bodyText: string) => {
      try {
        interpretResponse(call, { httpStatus, bodyText }, dataSchema);
      } catch (err) {
        return err as ServiceUnavailableError;
      }
      throw new Error("expected a failure");
    };
    // Caddy's own 502 has no body; nginx's is a page.
    const badGateway = failure(read, 502, "");
    expect(badGateway).toMatchObject({ code: 502, retryable: true, enveloped: false });
    expect(badGateway.message).toBe(
      "GET /v1/nasStorage/instance/n1/detail failed with status 502: Bad Gateway from a proxy or gateway in front of the service, not from the service: it could not reach the service (is the address it forwards to right?)",
    );
    const timedOut = failure(create, 504, "<html><title>504 Gateway Time-out</title></html>");
    expect(timedOut).toMatchObject({ code: 504, retryable: true, outcomeUnknown: true });
    expect(timedOut.message).toBe(
      "POST /v1/subscription/nasStorage/create failed with status 504: Gateway Timeout from a proxy or gateway in front of the service, not from the service: the service did not answer it within the proxy's timeout",
    );
    // The service's own 502 (in its envelope) stays the service's.
    expect(failure(read, 200, env(502, "upstream db down")).message).toBe(
      "GET /v1/nasStorage/instance/n1/detail failed with status 502: upstream db down",
    );
  });

  it("treats a bare HTTP 404 as a refusal that hints at the path, not as not-found", () => {
    let caught: unknown;
    try {
      interpretResponse(read, { httpStatus: 404, bodyText: "404 page not found" }, dataSchema);
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(ServiceRefusedError);
    expect(caught).not.toBeInstanceOf(ServiceNotFoundError);
    expect((caught as Error).message).toMatch(/endpoint path/);
  });

  it("names the field that failed the schema", () => {
    expect(() =>
      interpretResponse(read, { httpStatus: 200, bodyText: env(200, "OK", { id: 7 }) }, dataSchema),
    ).toThrow(/malformed response: data\.id: /);
  });

  it("marks a 5xx of a create as an unknown outcome but a 429 as not applied", () => {
    const fail = (raw: { httpStatus: number; bodyText: string }) => {
      try {
        interpretResponse(create, raw, z.string());
      } catch (err) {
        return err as ServiceUnavailableError;
      }
      throw new Error("expected an error");
    };
    expect(fail({ httpStatus: 200, bodyText: env(500, "boom") }).outcomeUnknown).toBe(true);
    expect(fail({ httpStatus: 429, bodyText: env(429, "slow down") }).outcomeUnknown).toBe(false);
    expect(fail({ httpStatus: 200, bodyText: "garbage" }).outcomeUnknown).toBe(true);
  });

  it.each([
    { reason: "a 429", raw: { httpStatus: 429, bodyText: env(429, "x") }, want: 2000 },
    { reason: "a 503 without envelope", raw: { httpStatus: 503, bodyText: "down" }, want: 2000 },
    { reason: "a 500 envelope", raw: { httpStatus: 200, bodyText: env(500, "x") }, want: 2000 },
    { reason: "a refusal", raw: { httpStatus: 200, bodyText: env(400, "x") }, want: undefined },
  ])("carries the server's Retry-After on a retryable error only: $reason", ({ raw, want }) => {
    try {
      interpretResponse(read, { ...raw, retryAfterMs: 2000 }, dataSchema);
    } catch (err) {
      expect((err as ServiceUnavailableError).retryAfterMs).toBe(want);
      return;
    }
    throw new Error("expected an error");
  });
});
