/**
 * The task operations' reads of a task's env for its client token
 * (kinds/trainingjob.ts `withEnv`), against a service double whose list answers tasks
 * without env: what its detail shows decides, and a detail without env proves nothing.
 */
import { describe, expect, it } from "vitest";
import { KindListStates } from "../kind-list.js";
import type { OperationCaller, OperationsContext } from "../operation-caller.js";
import { CLIENT_TOKEN_ENV } from "../schemas/create.js";
import { TrainingTaskOperations } from "./trainingjob.js";

/** Task operations over a list of `ids` (no env) whose details answer `detail(id)`. */
function tasksOver(ids: string[], detail: (id: string) => Record<string, unknown>) {
  const caller: OperationCaller = {
    request: async (name, args, schema) => {
      if (name === "listTrainingTasks") {
        return schema.parse({
          records: ids.map((id) => ({ id, status: "RUNNING" })),
          pageNo: 1,
          pageSize: 50,
          totalRows: ids.length,
        });
      }
      if (name === "getTrainingTask") return schema.parse(detail(String(args.params?.id)));
      throw new Error(`unexpected ${name}`);
    },
    checkedBody: (_name, _schema, body) => body,
    operationState: () => "present",
    requireOperations: async () => {},
  };
  const ctx = {
    caller,
    now: () => 0,
    lists: new KindListStates(() => 0),
    knownMissing: () => false,
  } as unknown as OperationsContext;
  return new TrainingTaskOperations(ctx);
}

describe("a task list without env", () => {
  it("proves a token absent only when every task's detail shows its env", async () => {
    const withEnv = tasksOver(["t1", "t2"], (id) => ({ id, env: { [CLIENT_TOKEN_ENV]: id } }));
    expect(await withEnv.provesTokenAbsent("other")).toBe(true);
    expect(await withEnv.provesTokenAbsent("t2")).toBe(false);
    expect(await withEnv.findIdsByClientToken("t2")).toEqual(["t2"]);
    // A detail without env says nothing of the token: no proof, nothing found.
    const bare = tasksOver(["t1", "t2"], (id) => (id === "t2" ? { id } : { id, env: {} }));
    expect(await bare.provesTokenAbsent("other")).toBe(false);
    expect(await bare.findIdsByClientToken("other")).toEqual([]);
  });
});
