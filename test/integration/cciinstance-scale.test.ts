/**
 * The CciInstance controller's cost at scale: with 50 bound instances and none in
 * error, each resync is one walk of the paged list, not a detail call per object
 * (counted in the emulator's request log).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cciInstanceController } from "../../src/controllers/cciinstance/controller.js";
import type { CciInstance } from "../../src/crds/cciinstance.js";
import { cciInstanceCrd } from "../../src/crds/cciinstance.js";
import { adminKubeConfig, createNamespace, eventually } from "../support/kube.js";
import { startTestOperator, type TestOperator } from "../support/operator.js";

const POLL_MS = 1_000;
const TTL_MS = 900;
const COUNT = 50;
const ids = Array.from({ length: COUNT }, (_, i) => `scale-${String(i).padStart(2, "0")}`);

describe("CciInstance controller with 50 bound instances", () => {
  let op: TestOperator;
  let ns: string;

  beforeAll(async () => {
    ns = await createNamespace(adminKubeConfig(), "cci-scale");
    op = await startTestOperator({
      controllers: [(deps) => cciInstanceController(deps, { snapshotTtlMs: TTL_MS })],
      namespaces: [ns],
      pollIntervalMs: POLL_MS,
    });
    await op.admin.seed({ cci: ids.map((id) => ({ id, name: id })) });
    for (const id of ids) {
      await op.kube.create(cciInstanceCrd, {
        metadata: { name: id, namespace: ns },
        spec: { instanceId: id },
      });
    }
  });

  afterAll(async () => {
    await op?.stop();
  });

  it("syncs every instance from one paged list per resync, with no detail calls", async () => {
    await eventually(
      async () => {
        const { items } = await op.kube.list<CciInstance & { [k: string]: unknown }>(
          cciInstanceCrd,
          ns,
        );
        const ready = items.filter((o) =>
          o.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True"),
        );
        return ready.length === COUNT;
      },
      60_000,
      250,
    );
    // Binding read each detail once (for the price); from now on the list serves.
    const since = (await op.admin.requests()).at(-1)?.seq ?? 0;
    const windowMs = 4 * POLL_MS;
    await new Promise((r) => setTimeout(r, windowMs));
    const calls = await op.admin.requests({ since });
    const byEndpoint = new Map<string, number>();
    for (const c of calls)
      byEndpoint.set(c.endpoint ?? c.path, (byEndpoint.get(c.endpoint ?? c.path) ?? 0) + 1);
    const walks = calls.filter((c) => c.endpoint === "listCci" && c.query.pageNo === "1").length;
    const pages = Math.ceil((COUNT + 4) / 50); // the 4 fixtures are listed too
    console.info(
      `service calls in ${windowMs} ms with ${COUNT} bound instances (poll ${POLL_MS} ms):`,
      Object.fromEntries(byEndpoint),
      `= ${walks} walks of ${pages} pages`,
    );
    // Only list pages: no detail and no error-details call for any of the 50.
    expect([...byEndpoint.keys()]).toEqual(["listCci"]);
    // One walk per TTL at most (a walk may straddle either end of the window).
    expect(walks).toBeGreaterThanOrEqual(3);
    expect(walks).toBeLessThanOrEqual(Math.ceil(windowMs / TTL_MS) + 1);
    const listCalls = byEndpoint.get("listCci") ?? 0;
    expect(listCalls).toBeGreaterThanOrEqual((walks - 1) * pages);
    expect(listCalls).toBeLessThanOrEqual((walks + 1) * pages);
    // A detail call per object per poll would have been COUNT per resync.
    expect(listCalls).toBeLessThan(COUNT);
  });
});
