import { describe, expect, it } from "vitest";
import { allCrds } from "../crds/index.js";
import type { KubeClient } from "../runtime/kube.js";
import { remainingCustomResources } from "./uninstall-check.js";

/**
 * A Kubernetes client whose lists answer `answer(n)` on the n-th call (from 1); the
 * objects carry a finalizer unless `bare`.
 */
function kubeAnswering(answer: (call: number) => Error | string[], bare = false) {
  let calls = 0;
  const listed: string[] = [];
  const kube = {
    list: async (crd: { plural: string; namespaced: boolean }, namespace?: string) => {
      calls++;
      listed.push(`${crd.plural} ${namespace ?? "*"}`);
      const a = answer(calls);
      if (a instanceof Error) throw a;
      const at = crd.namespaced ? { namespace: namespace ?? "ns" } : {};
      const finalizers = bare ? {} : { finalizers: ["aidc.io/held"] };
      return { items: a.map((name) => ({ metadata: { ...at, name, ...finalizers } })) };
    },
  } as unknown as KubeClient;
  return { kube, calls: () => calls, listed };
}

const httpError = (code: number) => Object.assign(new Error(`HTTP ${code}`), { code });

/** A clock that the fake sleep moves on. */
function fakeTime() {
  let t = 0;
  const slept: number[] = [];
  return {
    slept,
    now: () => t,
    sleep: async (ms: number) => {
      slept.push(ms);
      t += ms;
    },
  };
}

describe("remainingCustomResources", () => {
  it("retries 429 and 5xx with the runtime's exponential backoff, then lists", async () => {
    const first = allCrds.length;
    const { kube } = kubeAnswering((n) =>
      n === 1 ? httpError(503) : n === 2 ? httpError(429) : n === 3 ? httpError(500) : ["a"],
    );
    const time = fakeTime();
    const remaining = await remainingCustomResources(kube, { namespaces: ["team"], ...time });
    expect(time.slept).toEqual([250, 500, 1_000]);
    expect(remaining).toHaveLength(first);
    expect(remaining[0]).toBe(`${allCrds[0]?.kind} team/a`);
  });

  it("lists a cluster-scoped kind once, at the cluster scope, and names its objects without a namespace", async () => {
    const { kube, listed } = kubeAnswering(() => ["x"]);
    const remaining = await remainingCustomResources(kube, {
      namespaces: ["a", "b"],
      ...fakeTime(),
    });
    for (const crd of allCrds) {
      const scopes = crd.namespaced ? ["a", "b"] : ["*"];
      expect(listed.filter((l) => l.startsWith(`${crd.plural} `))).toEqual(
        scopes.map((s) => `${crd.plural} ${s}`),
      );
      const named = crd.namespaced ? [`${crd.kind} a/x`, `${crd.kind} b/x`] : [`${crd.kind} x`];
      expect(remaining.filter((r) => r.startsWith(`${crd.kind} `))).toEqual(named);
    }
    expect(allCrds.some((c) => !c.namespaced)).toBe(true);
  });

  it("does not count a ServiceConnection without a finalizer (unused: deleted with the release)", async () => {
    const { kube } = kubeAnswering(() => ["x"], true);
    const remaining = await remainingCustomResources(kube, { namespaces: ["a"], ...fakeTime() });
    expect(remaining).toContain(`${allCrds[0]?.kind} a/x`);
    expect(remaining.filter((r) => r.startsWith("ServiceConnection "))).toEqual([]);
  });

  it("gives up after 30 s of transient answers, with the last error", async () => {
    const { kube } = kubeAnswering(() => httpError(503));
    const time = fakeTime();
    await expect(remainingCustomResources(kube, { namespaces: [], ...time })).rejects.toThrow(
      "HTTP 503",
    );
    // 250 ms doubling up to 4 s; the next 4 s would pass the 30 s deadline.
    expect(time.slept).toEqual([250, 500, 1_000, 2_000, 4_000, 4_000, 4_000, 4_000, 4_000, 4_000]);
  });

  it("refuses a namespace that is no namespace name before it lists anything", async () => {
    const { kube, calls } = kubeAnswering(() => []);
    await expect(
      remainingCustomResources(kube, { namespaces: ["team-a", "Team_B"] }),
    ).rejects.toThrow(/not a namespace name .*: Team_B$/);
    expect(calls()).toBe(0);
  });

  it("does not retry a refusal, and counts a kind whose CRD is gone as empty", async () => {
    const refused = kubeAnswering(() => httpError(403));
    const time = fakeTime();
    await expect(
      remainingCustomResources(refused.kube, { namespaces: [], ...time }),
    ).rejects.toThrow("HTTP 403");
    expect(refused.calls()).toBe(1);
    const gone = kubeAnswering(() => httpError(404));
    expect(await remainingCustomResources(gone.kube, { namespaces: [], ...time })).toEqual([]);
    expect(time.slept).toEqual([]);
  });
});
