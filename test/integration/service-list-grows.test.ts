/**
 * Lists that grow while they are walked (`listGrowsAfterFirstPage`: a record made
 * between page 1 and the next), walked two records a page under each `listOrder`,
 * against a real API server and the emulator: newest first, a later page repeats a
 * record and `totalRows` rises. Creates of a NasVolume, a TrainingJob and a
 * TrainingTemplate that acted and answered HTTP 500 are found once and bound to their
 * own records; creates that never acted are not proven absent, so never sent again; a
 * CciInstance binds by a name one instance has and not by one two have; a task list
 * without env reads each settled task in detail no more while idle.
 */
import { describe, expect, it } from "vitest";
import type { ListOrder } from "../../src/emulator/behaviour.js";
import type { KubeObject } from "../../src/runtime/resource.js";
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

const POLL_MS = 1_000;
const failsOnce = (endpoint: string) =>
  ({ kind: "error", endpoint, httpStatus: 500, times: 1 }) as const;
/** Objects made before the ones under test: like names, so that each lookup lists them all. */
const OTHERS = ["a", "b"];
type Ids = { storageId?: string; taskId?: string; templateId?: string; instanceId?: string };
const ids = (o: KubeObject | undefined) => (o?.status ?? {}) as Ids;

describe.each<ListOrder>(["oldestFirst", "newestFirst", "byName"])("lists %s", (listOrder) => {
  const w = useListWalkWorld(() => ({
    prefix: `grows-${listOrder.toLowerCase()}`,
    emulator: { listOrder, listGrowsAfterFirstPage: 1, listsOmitEnv: true },
    others: OTHERS,
    pollIntervalMs: POLL_MS,
  }));
  const sent = (endpoint: string, name: string) => w.sent(endpoint, name);
  const remote = () => ({
    nas: [...w.emulator.state.nas.values()],
    tasks: [...w.emulator.state.tasks.values()],
    templates: [...w.emulator.state.templates.values()].map((t) => ({
      id: t.id,
      name: String(t.fields.name),
    })),
  });
  const idOf = (records: { id: string; name?: string }[], name: string) =>
    records.filter((r) => r.name === name).map((r) => r.id);

  it("answers later pages with one record more in totalRows, newest first repeating one", async () => {
    const page = async (pageNo: number) =>
      wireData(w.emulator, `/v1/nasStorage/instance/list?pageNo=${pageNo}&pageSize=2`);
    const [first, second] = [await page(1), await page(2)];
    expect(second.totalRows).toBe((first.totalRows as number) + 1);
    const names = (p: Record<string, unknown>) =>
      (p.records as { name: string }[]).map((r) => r.name);
    const repeated = names(second).filter((n) => names(first).includes(n));
    expect(repeated).toHaveLength(listOrder === "newestFirst" ? 1 : 0);
  });

  it("finds creates that acted and answered 500 once, each bound to its own record", async () => {
    const [n, j, t] = await createThroughLostAnswers(w);
    await new Promise((r) => setTimeout(r, WINDOW_MS + 1_000));
    const now = remote();
    expect([ids(n).storageId]).toEqual(idOf(now.nas, "store"));
    expect([ids(j).taskId]).toEqual(idOf(now.tasks, "train"));
    expect([ids(t).templateId]).toEqual(idOf(now.templates, "tpl"));
    // No record bound twice: each object its own.
    for (const [objects, prefix, field] of [
      [w.nas, "store", "storageId"],
      [w.jobs, "train", "taskId"],
      [w.templates, "tpl", "templateId"],
    ] as const) {
      const names = [prefix, ...OTHERS.map((x) => `${prefix}-${x}`)];
      const bound = await Promise.all(names.map(async (m) => ids(await objects.get(m))[field]));
      expect(new Set(bound).size).toBe(names.length);
    }
    await expectEachSentOnce(w);
  }, 60_000);

  it("proves no create that never acted absent, so sends none again", async () => {
    w.emulator.faults.set([failsOnce("subscribeNas"), failsOnce("createTrainingTask")]);
    await w.nas.create("store-gone", NAS_SPEC);
    await w.jobs.create("train-gone", JOB_SPEC);
    await w.nas.waitForCondition("store-gone", "Synced", "False", "CreateOutcomeUnknown", 40_000);
    await w.jobs.waitForCondition("train-gone", "Synced", "False", "CreateOutcomeUnknown", 40_000);
    await new Promise((r) => setTimeout(r, 1_500));
    expect(await sent("subscribeNas", "store-gone")).toHaveLength(1);
    expect(await sent("createTrainingTask", "train-gone")).toHaveLength(1);
    expect(idOf(remote().nas, "store-gone")).toEqual([]);
    expect(await w.nas.eventReasons("store-gone")).not.toContain("CreateRepeated");
    expect(await w.jobs.eventReasons("train-gone")).not.toContain("CreateRepeated");
  }, 60_000);

  it("binds a CCI instance by a name one instance has, and none by a name two have", async () => {
    await w.cci.create("alone", { name: "nb-alone" });
    await w.cci.create("twin", { name: "nb-twin" });
    const bound = await w.cci.waitFor("alone", (o) => !!ids(o).instanceId);
    expect(ids(bound).instanceId).toBe("nb-1");
    const twin = await w.cci.waitForCondition("twin", "Bound", "False", "AmbiguousName");
    expect(conditionOf(twin, "Bound")?.message).toMatch(/nb-2.*nb-4|nb-4.*nb-2/);
    await new Promise((r) => setTimeout(r, 2 * POLL_MS));
    expect(ids(await w.cci.get("twin")).instanceId).toBeUndefined();
    expect(ids(await w.cci.get("alone")).instanceId).toBe("nb-1");
  }, 30_000);

  it("reads no settled task in detail again while idle (the list leaves env out)", async () => {
    const names = ["train", ...OTHERS.map((x) => `train-${x}`)];
    const settled = await Promise.all(names.map(async (m) => ids(await w.jobs.get(m)).taskId));
    expect(settled.every((id) => id !== undefined)).toBe(true);
    const reads = async () =>
      (await w.op.admin.requests({ endpoint: "getTrainingTask" })).filter((e) =>
        settled.some((id) => e.path.includes(String(id))),
      ).length;
    await new Promise((r) => setTimeout(r, 2 * POLL_MS));
    const before = await reads();
    await new Promise((r) => setTimeout(r, 4 * POLL_MS));
    expect((await reads()) - before).toBe(0);
  }, 30_000);
});
