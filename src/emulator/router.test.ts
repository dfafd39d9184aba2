import { describe, expect, it } from "vitest";
import { DEFAULT_ENDPOINTS, ENDPOINT_NAMES } from "../service/endpoints.js";
import { renderPath } from "../service/schemas/primitives.js";
import { OperationRouter } from "./router.js";

const router = new OperationRouter();

describe("OperationRouter", () => {
  it.each(ENDPOINT_NAMES)("routes the default path of %s to it", (name) => {
    const { method, path } = DEFAULT_ENDPOINTS[name];
    const params = { id: "id-1", podName: "pod-1", key: "key-1", mountId: "mnt-1" };
    const match = router.match(method, renderPath(name, path, params));
    expect(match?.name).toBe(name);
    for (const p of path.match(/\{(\w+)\}/g) ?? []) {
      const k = p.slice(1, -1) as keyof typeof params;
      expect(match?.params[k]).toBe(params[k]);
    }
  });

  it("prefers the literal list path to an id placeholder", () => {
    expect(router.match("GET", "/v1/cci/instance/list")?.name).toBe("listCci");
    expect(router.match("GET", "/v1/cci/instance/cci-1")?.name).toBe("getCci");
  });

  it("decodes path parameters", () => {
    expect(router.match("GET", "/v1/nasStorage/instance/a%20b/detail")?.params.id).toBe("a b");
  });

  it("matches nothing for an unknown path or method", () => {
    expect(router.match("GET", "/v1/unknown")).toBeUndefined();
    expect(router.match("PATCH", "/v1/cci/instance/cci-1")).toBeUndefined();
  });
});
