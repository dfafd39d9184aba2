import { describe, expect, it } from "vitest";
import { FaultInjector } from "./faults.js";
import { seededRandom } from "./state.js";

const target = (endpoint: string, method = "GET", path = "/v1/x") => ({ endpoint, method, path });

describe("FaultInjector", () => {
  it("injects nothing without rules", () => {
    expect(new FaultInjector(Math.random).decide(target("getNas"))).toEqual({ latencyMs: 0 });
  });

  it("targets an endpoint, a method and a path prefix", () => {
    const f = new FaultInjector(() => 0);
    f.set([
      { kind: "error", endpoint: "getNas" },
      { kind: "drop", method: "post" },
      { kind: "malformed", pathPrefix: "/v1/cci/" },
    ]);
    expect(f.decide(target("getNas")).fault?.kind).toBe("error");
    expect(f.decide(target("subscribeNas", "POST")).fault?.kind).toBe("drop");
    expect(f.decide(target("listCci", "GET", "/v1/cci/instance/list")).fault?.kind).toBe(
      "malformed",
    );
    expect(f.decide(target("listNas")).fault).toBeUndefined();
  });

  it("expires a rule after the given number of applications", () => {
    const f = new FaultInjector(() => 0);
    f.set([{ kind: "error", times: 2 }]);
    expect([1, 2, 3].map(() => f.decide(target("getNas")).fault?.kind)).toEqual([
      "error",
      "error",
      undefined,
    ]);
    expect(f.list()).toEqual([]);
  });

  it("lets the first matching requests through when told to skip them", () => {
    const f = new FaultInjector(() => 0);
    f.set([{ kind: "error", endpoint: "listTemplates", skip: 1, times: 1 }]);
    expect(f.decide(target("getNas")).fault).toBeUndefined();
    expect([1, 2, 3].map(() => f.decide(target("listTemplates")).fault?.kind)).toEqual([
      undefined,
      "error",
      undefined,
    ]);
  });

  it("adds up latency rules and still applies a terminal fault", () => {
    const f = new FaultInjector(() => 0);
    f.set([
      { kind: "latency", latencyMs: 10 },
      { kind: "rateLimit" },
      { kind: "latency", latencyMs: 5 },
      { kind: "error" },
    ]);
    const d = f.decide(target("getNas"));
    expect(d.latencyMs).toBe(15);
    expect(d.fault?.kind).toBe("rateLimit");
  });

  it("applies a rate as a probability, the same way under the same seed", () => {
    const run = () => {
      const f = new FaultInjector(seededRandom(42));
      f.set([{ kind: "error", rate: 0.25 }]);
      return Array.from({ length: 2000 }, () => (f.decide(target("getNas")).fault ? 1 : 0));
    };
    const hits = run();
    const share = hits.reduce<number>((a, b) => a + b, 0) / hits.length;
    expect(share).toBeGreaterThan(0.2);
    expect(share).toBeLessThan(0.3);
    expect(run()).toEqual(hits);
  });

  it("refuses an invalid rule", () => {
    expect(() => new FaultInjector(Math.random).set([{ kind: "error", rate: 2 }])).toThrow();
    expect(() => new FaultInjector(Math.random).set([{ kind: "explode" as "error" }])).toThrow();
  });
});
