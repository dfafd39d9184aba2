/**
 * The task operations' memory of a task's env (kinds/trainingjob.env.ts), against a
 * service double whose list answers tasks without env: what its detail shows decides, a
 * detail without env proves nothing, every detail read is kept once for the account,
 * and a complete walk of the whole list forgets the tasks it no longer shows.
 */
import { describe, expect, it } from "vitest";
import { KindListStates } from "../kind-list.js";
import type { OperationCaller, OperationsContext } from "../operation-caller.js";
import { CLIENT_TOKEN_ENV } from "../schemas/create.js";
import { trainingTaskSchema } from "../schemas/training.js";
import { TrainingTaskOperations } from "./trainingjob.js";

/**
 * Task operations over a list of `ids` (changed by the test; without env unless
 * `listed` says otherwise) whose details answer `detail(id)`, with the detail reads
 * made and the account's kept details.
 */
function tasksOver(
  ids: string[],
  detail: (id: string) => Record<string, unknown>,
  listed: (id: string) => object = () => ({}),
) {
  const detailReads: string[] = [];
  const caller: OperationCaller = {
    request: async (name, args, schema) => {
      if (name === "listTrainingTasks") {
        return schema.parse({
          records: ids.map((id) => ({ id, status: "RUNNING", ...listed(id) })),
          pageNo: 1,
          pageSize: 50,
          totalRows: ids.length,
        });
      }
      if (name === "getTrainingTask") {
        detailReads.push(String(args.params?.id));
        return schema.parse(detail(String(args.params?.id)));
      }
      if (name === "deleteTrainingTask") return schema.parse({});
      throw new Error(`unexpected ${name}`);
    },
    checkedBody: (_name, _schema, body) => body,
    operationState: () => "present",
    requireOperations: async () => {},
  };
  const lists = new KindListStates(() => 0);
  const ctx = { caller, now: () => 0, lists, knownMissing: () => false };
  const tasks = new TrainingTaskOperations(ctx as unknown as OperationsContext);
  const { details } = lists.of("listTrainingTasks", trainingTaskSchema, (t) => t.id);
  return { tasks, detailReads, kept: () => details.ids().sort() };
}

const tokenEnv = (id: string) => ({ id, env: { [CLIENT_TOKEN_ENV]: id } });

describe("a task list without env", () => {
  it("proves a token absent only when every task's detail shows its env", async () => {
    const withEnv = tasksOver(["t1", "t2"], tokenEnv).tasks;
    expect(await withEnv.provesTokenAbsent("other")).toBe(true);
    expect(await withEnv.provesTokenAbsent("t2")).toBe(false);
    expect(await withEnv.findIdsByClientToken("t2")).toEqual(["t2"]);
    // A detail without env says nothing of the token: no proof, nothing found.
    const bare = tasksOver(["t1", "t2"], (id) => (id === "t2" ? { id } : { id, env: {} })).tasks;
    expect(await bare.provesTokenAbsent("other")).toBe(false);
    expect(await bare.findIdsByClientToken("other")).toEqual([]);
  });

  it("keeps one env per task for the account: a task a poll read in detail is listed with it and not read again by a token walk", async () => {
    const { tasks, detailReads } = tasksOver(["t1", "t2", "t3"], (id) =>
      id === "t3" ? { id } : tokenEnv(id),
    );
    expect((await tasks.listSnapshot(0))?.records.get("t1")?.env).toBeUndefined();
    // The poll's detail read of t1, and t3's, whose detail shows no env.
    await tasks.get("t1");
    await tasks.get("t3");
    const listed = (await tasks.listSnapshot(0))?.records;
    expect(listed?.get("t1")?.env).toEqual({ [CLIENT_TOKEN_ENV]: "t1" });
    // Known without env: listed with an empty one, as its detail gives the status.
    expect(listed?.get("t3")?.env).toEqual({});
    detailReads.length = 0;
    // Only t2, never read in detail, is read by the walks; t3 proves nothing.
    expect(await tasks.findIdsByClientToken("t1")).toEqual(["t1"]);
    expect(await tasks.provesTokenAbsent("other")).toBe(false);
    expect(detailReads).toEqual(["t2"]);
  });

  it("forgets a task once a complete walk of the whole list no longer shows it, or once deleted", async () => {
    const ids = ["t1", "t2", "t3", "t4"];
    const { tasks, kept } = tasksOver(ids, tokenEnv);
    // A lookup narrowed by name, and polls' detail reads, keep their tasks.
    expect(await tasks.findIdsByClientToken("t1", "job")).toEqual(["t1"]);
    expect(kept()).toEqual(["t1", "t2", "t3", "t4"]);
    ids.splice(0, 2);
    // A narrowed walk does not prune; the routine snapshot's whole walk does.
    await tasks.findIdsByClientToken("t3", "job");
    expect(kept()).toEqual(["t1", "t2", "t3", "t4"]);
    await tasks.listSnapshot(0);
    expect(kept()).toEqual(["t3", "t4"]);
    // A task kept while a walk is under way stays (the walk may have started before it).
    const walk = tasks.iterate();
    let step = await walk.next();
    await tasks.get("t5");
    while (!step.done) step = await walk.next();
    expect(kept()).toEqual(["t3", "t4", "t5"]);
    await tasks.delete("t4");
    expect(kept()).toEqual(["t3", "t5"]);
  });

  it("keeps nothing while the list carries env", async () => {
    const { tasks, kept } = tasksOver(["t1"], tokenEnv, tokenEnv);
    expect(await tasks.provesTokenAbsent("other")).toBe(true);
    await tasks.get("t1");
    expect((await tasks.listSnapshot(0))?.records.get("t1")?.env).toEqual({
      [CLIENT_TOKEN_ENV]: "t1",
    });
    expect(kept()).toEqual([]);
  });
});
