import { describe, expect, it } from "vitest";
import { KubeApiError } from "./kube-errors.js";

/** A Status as the API server answers a write (message as kube-apiserver v1.36 words it). */
const status = (code: number, reason: string, message: string) => ({
  kind: "Status",
  status: "Failure",
  code,
  reason,
  message,
});

describe("a write refused by the cluster's admission", () => {
  it.each([
    [
      "a validating webhook (403, no Status reason)",
      403,
      "",
      'admission webhook "no-finalizer.example.io" denied the request: finalizers are not allowed here',
    ],
    [
      "a ValidatingAdmissionPolicy (422 Invalid)",
      422,
      "Invalid",
      "nasvolumes.aidc.io \"a\" is invalid: : ValidatingAdmissionPolicy 'p' with binding 'b' denied request: no",
    ],
    [
      "a ValidatingAdmissionPolicy (403 Forbidden)",
      403,
      "Forbidden",
      "ValidatingAdmissionPolicy 'p' with binding 'b' denied request: no create-pending here",
    ],
  ])("%s is AdmissionDenied", (_what, code, reason, message) => {
    const err = new KubeApiError("PATCH", "/x", code, status(code, reason, message));
    expect(err.reason).toBe("AdmissionDenied");
    expect(err.message).toContain(message);
  });

  it("keeps the Status reason of other refusals, a webhook that cannot be called among them", () => {
    const down = status(
      500,
      "InternalError",
      'Internal error occurred: failed calling webhook "down.example.io": connection refused',
    );
    expect(new KubeApiError("PATCH", "/x", 500, down).reason).toBe("InternalError");
    expect(new KubeApiError("PATCH", "/x", 403, status(403, "Forbidden", "rbac")).reason).toBe(
      "Forbidden",
    );
    expect(new KubeApiError("GET", "/x", 404, "404 page not found").reason).toBe("Http404");
  });
});
