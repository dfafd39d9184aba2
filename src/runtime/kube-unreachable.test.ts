/**
 * Which failures of a Kubernetes request, or ends of a watch, are a KubeUnreachableError: the API server, or
 * the proxy to it, not reached or not answering, or a front's 502, 503 or 504 in its
 * place; never an answer of the API server, whatever its status.
 */
import { describe, expect, it } from "vitest";
import { RetryableError } from "./errors.js";
import { TlsUnansweredError } from "./kube-connector.js";
import { KubeApiError, ReconcileAbandonedError, WatchStatusError } from "./kube-errors.js";
import { isKubeUnreachable, KubeUnreachableError, unreachableOr } from "./kube-unreachable.js";
import { ProxyConnectError } from "./proxy-errors.js";

const coded = (message: string, code: string) => Object.assign(new Error(message), { code });

/** A front's own answer `status`, as nginx writes it: an HTML page without Audit-Id. */
const frontPage = (method: string, status: number) =>
  new KubeApiError(method, "/x", status, `<html><title>${status} x</title></html>`, false);

/** A watch answered `status` by a front: its HTML page, without Audit-Id. */
const watchPage = (status: number) =>
  new WatchStatusError(status, `<html><title>${status} x</title></html>`, false);

describe("a request's error as a KubeUnreachableError", () => {
  it.each([
    ["a connection refused", coded("connect ECONNREFUSED 10.0.0.1:6443", "ECONNREFUSED")],
    ["a connection reset", coded("read ECONNRESET", "ECONNRESET")],
    ["a connection closed by the other side", coded("other side closed", "UND_ERR_SOCKET")],
    ["a write on a closed connection", coded("write EPIPE", "EPIPE")],
    [
      "a TLS handshake cut",
      coded(
        "Client network socket disconnected before secure TLS connection was established",
        "ECONNRESET",
      ),
    ],
    [
      "an HTTP/2 stream ended by a GOAWAY",
      coded('HTTP/2: "GOAWAY" frame received with code 0', "UND_ERR_INFO"),
    ],
    ["an HTTP/2 stream reset", coded("Stream closed with error code", "ERR_HTTP2_STREAM_ERROR")],
    ["a name not found", coded("getaddrinfo ENOTFOUND api.corp", "ENOTFOUND")],
    ["a name lookup that failed for now", coded("getaddrinfo EAI_AGAIN api.corp", "EAI_AGAIN")],
    ["a host unreachable", coded("connect EHOSTUNREACH 10.0.0.1:6443", "EHOSTUNREACH")],
    ["a network unreachable", coded("connect ENETUNREACH 10.0.0.1:6443", "ENETUNREACH")],
    ["a connect timeout", coded("Connect Timeout Error", "UND_ERR_CONNECT_TIMEOUT")],
    [
      "a TLS handshake unanswered",
      new TlsUnansweredError("10.0.0.1:6443", 30_000, coded("x", "UND_ERR_CONNECT_TIMEOUT")),
    ],
    [
      "a proxy that cannot be reached",
      new ProxyConnectError(
        "http://10.0.0.5:3128",
        "HTTPS_PROXY",
        coded("connect ECONNREFUSED 10.0.0.5:3128", "ECONNREFUSED"),
      ),
    ],
    [
      "a proxy's CONNECT refused",
      new ProxyConnectError(
        "http://10.0.0.5:3128",
        "HTTPS_PROXY",
        coded("Proxy response (503) !== 200 when HTTP Tunneling", "UND_ERR_ABORTED"),
      ),
    ],
    [
      "a SOCKS5 proxy that cannot reach the server",
      new ProxyConnectError(
        "socks5://10.0.0.5:1080",
        "HTTPS_PROXY",
        coded(
          "SOCKS5 proxy: Socks5 proxy rejected connection - HostUnreachable",
          "ERR_PROXY_TUNNEL",
        ),
      ),
    ],
    ["no answer in the request timeout", coded("Headers Timeout Error", "UND_ERR_HEADERS_TIMEOUT")],
    [
      "an answer cut short by the request timeout",
      coded("Body Timeout Error", "UND_ERR_BODY_TIMEOUT"),
    ],
    ["502 of a front", frontPage("GET", 502)],
    ["503 of a front", frontPage("PATCH", 503)],
    ["504 of a front", frontPage("GET", 504)],
    ["503 of a front without a body", new KubeApiError("GET", "/x", 503, undefined, false)],
    ["a watch answered 502 by a front", watchPage(502)],
    ["a watch answered 504 by a front", watchPage(504)],
  ])("is %s, with the cause's message and code", (_what, cause) => {
    const err = unreachableOr(cause);
    expect(err).toBeInstanceOf(KubeUnreachableError);
    const { code, statusCode } = cause as { code?: unknown; statusCode?: unknown };
    expect(err).toMatchObject({ message: cause.message, code: code ?? statusCode });
    expect((err as Error).cause).toBe(cause);
    expect(isKubeUnreachable(err)).toBe(true);
    // Wrapped by a reconcile's error, or wrapped again: the same.
    expect(isKubeUnreachable(new RetryableError("StatusWrite", "x", { cause: err }))).toBe(true);
    expect(unreachableOr(err)).toBe(err);
  });

  it.each([
    ["403 Forbidden", new KubeApiError("PATCH", "/x", 403, { reason: "Forbidden" })],
    ["422 Invalid", new KubeApiError("PATCH", "/x", 422, { reason: "Invalid" })],
    ["500 of the API server", new KubeApiError("PATCH", "/x", 500, { reason: "InternalError" })],
    [
      "503 of the API server (a Status, with its Audit-Id)",
      new KubeApiError("GET", "/x", 503, { kind: "Status", reason: "ServiceUnavailable" }),
    ],
    [
      "503 of the API server (a Status) without its Audit-Id",
      new KubeApiError("GET", "/x", 503, { kind: "Status", reason: "ServiceUnavailable" }, false),
    ],
    ["502 of the API server (its Audit-Id)", new KubeApiError("GET", "/x", 502, "Bad Gateway")],
    ["500 of a front", frontPage("PATCH", 500)],
    ["404 of a front", frontPage("GET", 404)],
    ["200 of a front", frontPage("GET", 200)],
    ["429 of a front", frontPage("GET", 429)],
    ["a watch's 410 Gone", new WatchStatusError(410, '{"kind":"Status","code":410}')],
    ["a watch's 429 of a front", watchPage(429)],
    [
      "a watch's 503 of the API server (a Status) without its Audit-Id",
      new WatchStatusError(503, '{"kind":"Status","code":503}', false),
    ],
    ["an abandoned reconcile's request", new ReconcileAbandonedError("PATCH /x")],
    ["a certificate not trusted", coded("unable to verify", "UNABLE_TO_VERIFY_LEAF_SIGNATURE")],
    ["a certificate of another name", coded("altname", "ERR_TLS_CERT_ALTNAME_INVALID")],
    ["an error without a code", new Error("exec plugin failed")],
  ])("is not %s", (_what, err) => {
    expect(unreachableOr(err)).toBe(err);
    expect(isKubeUnreachable(err)).toBe(false);
  });
});
