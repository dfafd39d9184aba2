/**
 * Lists in the orders other services may give (`listOrder`: oldest first, newest first,
 * by name), walked two records a page, against a real API server and the emulator:
 * under each, a NasVolume, a TrainingJob and a TrainingTemplate whose creates acted and
 * answered HTTP 500 are found once (by token, by name) among others of like names,
 * a NAS's and a template's creates that never acted are proven absent and sent once
 * more, and a CciInstance binds by a name one instance has, not by one two have.
 */
import { describe, expect, it } from "vitest";
import type { ListOrder } from "../../src/emulator/behaviour.js";
import {
  createThroughLostAnswers,
  expectEachSentOnce,
  WALK_JOB_SPEC as JOB_SPEC,
  WALK_NAS_SPEC as NAS_SPEC,
  useListWalkWorld,
  WALK_WINDOW_MS as WINDOW_MS,
} from "../support/list-walks.js";
import { conditionOf } from "../support/managed.js";
import { wireData } from "../support/operator.js";

/** Objects made before the one under test: like names, so that each lookup lists them all. */
const OTHERS = ["a", "b", "c"];

describe.each<ListOrder>(["oldestFirst", "newestFirst", "byName"])("lists %s", (listOrder) => {
  const w = useListWalkWorld(() => ({
    prefix: `order-${listOrder.toLowerCase()}`,
    emulator: { listOrder },
    others: OTHERS,
  }));
  const sent = (endpoint: string, name: string) => w.sent(endpoint, name);
  const remote = () => ({
    nas: [...w.emulator.state.nas.values()].map((n) => n.name),
    tasks: [...w.emulator.state.tasks.values()].map((t) => t.name),
    templates: [...w.emulator.state.templates.values()].map((t) => String(t.fields.name)),
  });
  const count = (names: string[], name: string) => names.filter((n) => n === name).length;

  it("finds creates that acted and answered 500 once, by token and by name", async () => {
    const page = await wireData(w.emulator, "/v1/nasStorage/instance/list?pageNo=1&pageSize=2");
    // The first page in the order of the mode: of the NAS as made (their orders resolved
    // in any order), the first two, the last two newest first, or the first two by name.
    const made = [...w.emulator.state.nas.values()].map((n) => n.name);
    const first = {
      oldestFirst: made.slice(0, 2),
      newestFirst: made.slice(-2).reverse(),
      byName: [...made].sort().slice(0, 2),
    }[listOrder];
    expect((page.records as { name: string }[]).map((r) => r.name)).toEqual(first);
    const [n, j, t] = await createThroughLostAnswers(w);
    const byName = (name: string, records: Map<string, { id: string; name?: string }>) =>
      [...records.values()].find((r) => r.name === name)?.id;
    expect((n.status as { storageId?: string }).storageId).toBe(
      byName("store", w.emulator.state.nas),
    );
    expect((j.status as { taskId?: string }).taskId).toBe(byName("train", w.emulator.state.tasks));
    const template = [...w.emulator.state.templates.values()].find((r) => r.fields.name === "tpl");
    expect((t.status as { templateId?: string }).templateId).toBe(template?.id);
    // Walked past the first page: the lookups read the others too.
    const walked = await w.op.admin.requests({ endpoint: "listNas" });
    expect(walked.some((e) => e.query.pageNo === "2")).toBe(true);

    await new Promise((r) => setTimeout(r, WINDOW_MS + 1_000));
    const now = remote();
    expect(count(now.nas, "store")).toBe(1);
    expect(count(now.tasks, "train")).toBe(1);
    expect(count(now.templates, "tpl")).toBe(1);
    await expectEachSentOnce(w);
  }, 60_000);

  it("proves creates of a NAS and a template that never acted absent and sends each once more", async () => {
    const failsOnce = (endpoint: string) =>
      ({ kind: "error", endpoint, httpStatus: 500, times: 1 }) as const;
    w.emulator.faults.set([failsOnce("subscribeNas"), failsOnce("createTemplate")]);
    await w.nas.create("store-gone", NAS_SPEC);
    await w.templates.create("tpl-gone", JOB_SPEC);
    await w.nas.waitForCondition("store-gone", "Ready", "True", undefined, 40_000);
    await w.templates.waitForCondition("tpl-gone", "Ready", "True", undefined, 40_000);
    expect(await sent("subscribeNas", "store-gone")).toHaveLength(2);
    expect(await sent("createTemplate", "tpl-gone")).toHaveLength(2);
    expect(count(remote().nas, "store-gone")).toBe(1);
    expect(count(remote().templates, "tpl-gone")).toBe(1);
    await w.nas.waitForEvents("store-gone", ["CreateRepeated"]);
    await w.templates.waitForEvents("tpl-gone", ["CreateRepeated"]);
  }, 60_000);

  it("binds a CCI instance by a name one instance has, and none by a name two have", async () => {
    await w.cci.create("alone", { name: "nb-alone" });
    await w.cci.create("twin", { name: "nb-twin" });
    const bound = await w.cci.waitFor(
      "alone",
      (o) => !!(o.status as { instanceId?: string }).instanceId,
    );
    expect((bound.status as { instanceId?: string }).instanceId).toBe("nb-1");
    const twin = await w.cci.waitForCondition("twin", "Bound", "False", "AmbiguousName");
    expect(conditionOf(twin, "Bound")?.message).toMatch(/nb-2.*nb-4|nb-4.*nb-2/);
    expect((twin.status as { instanceId?: string }).instanceId).toBeUndefined();
  }, 30_000);
});
