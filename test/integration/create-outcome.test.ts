/**
 * Creates whose outcome is unknown, against a real API server and the emulator: a
 * create the service carries out and then answers with HTTP 500 is never sent again,
 * however late the new resource shows in the list; after the list visibility window
 * the object stops with CreateOutcomeUnknown, and both ways out work (remove
 * create-pending: one new create; set external-id: adopted). A task list without env
 * (`listsOmitEnv`) still finds the task: its detail shows the token. Deleted under
 * deletionPolicy Delete meanwhile, the object keeps its finalizer until the list proves
 * the create made nothing, or, when it cannot, until the user names what it made. A
 * list that shrinks while it is walked (`listShrinksAfterFirstPage`) proves nothing.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { ANNOTATIONS } from "../../src/controllers/managed/decisions.js";
import { nasVolumeController } from "../../src/controllers/nasvolume/controller.js";
import { trainingJobController } from "../../src/controllers/trainingjob/controller.js";
import { nasVolumeCrd } from "../../src/crds/nasvolume.js";
import { trainingJobCrd } from "../../src/crds/trainingjob.js";
import { type RunningEmulator, startEmulator } from "../../src/emulator/server.js";
import type { KubeObject } from "../../src/runtime/resource.js";
import { adminKubeConfig, createNamespace } from "../support/kube.js";
import { conditionOf, ObjectsOf } from "../support/managed.js";
import { startTestOperator, TEST_API_KEY, type TestOperator } from "../support/operator.js";

const controllers = [nasVolumeController, trainingJobController];
const jobSpec = {
  image: "registry.example.com/ml/train:1",
  productCode: "train.cpu.16",
  workerCount: 1,
};
const nasSpec = { productCode: "nas.capacity.standard", capacityGB: 100 };
/** A create that takes effect and then answers HTTP 500 with the error envelope. */
const actsThenFails = (endpoint: string) =>
  ({ kind: "error", endpoint, acting: true, httpStatus: 500, times: 1 }) as const;
const running = (o: KubeObject) =>
  (o.status as { phase?: string } | undefined)?.phase === "Running";

let emulator: RunningEmulator;
const operators: TestOperator[] = [];

beforeAll(async () => {
  emulator = await startEmulator({ apiKey: TEST_API_KEY, subscriptionDelayMs: 300 });
});
afterEach(async () => {
  for (const op of operators.splice(0)) await op.stop();
  emulator.faults.clear();
  emulator.state.behaviour.listVisibilityDelayMs = 0;
  emulator.state.behaviour.listsOmitEnv = false;
  emulator.state.behaviour.listsOmitDescription = false;
  emulator.state.behaviour.pageSizeCap = 0;
  emulator.state.behaviour.listShrinksAfterFirstPage = 0;
});
afterAll(async () => {
  await emulator?.stop();
});

/**
 * An operator on the shared emulator; `windowMs` sets service.listVisibilityWindowMs,
 * `recreate` service.recreateLostCreates.
 */
async function start(prefix: string, windowMs?: number, recreate = true) {
  const namespace = await createNamespace(adminKubeConfig(), prefix);
  const op = await startTestOperator({
    controllers,
    namespaces: [namespace],
    emulator,
    // The spec names no NAS delete; the emulator serves this one.
    service: { endpoints: { deleteNas: "DELETE /v1/nasStorage/instance/{id}" } },
    ...(windowMs === undefined
      ? {}
      : {
          config: {
            service: {
              baseUrl: emulator.url,
              allowInsecureHttp: true,
              listVisibilityWindowMs: windowMs,
              recreateLostCreates: recreate,
            },
          },
        }),
  });
  operators.push(op);
  return {
    op,
    nas: new ObjectsOf(op.kube, nasVolumeCrd, namespace),
    jobs: new ObjectsOf(op.kube, trainingJobCrd, namespace),
  };
}

const named = (name: string) => (e: { body?: unknown }) =>
  JSON.stringify(e.body).includes(`"name":"${name}"`);
const creates = async (op: TestOperator, endpoint: string, name: string) =>
  (await op.admin.requests({ endpoint })).filter(named(name));
const remote = (name: string) => ({
  nas: [...emulator.state.nas.values()].filter((n) => n.name === name),
  tasks: [...emulator.state.tasks.values()].filter((t) => t.name === name),
});

describe("a create that acts and then answers HTTP 500", () => {
  it("makes exactly one task and one NAS when they are listed only 30 s later (default window)", async () => {
    const { op, nas, jobs } = await start("late-listing");
    emulator.state.behaviour.listVisibilityDelayMs = 30_000;
    emulator.faults.set([actsThenFails("subscribeNas"), actsThenFails("createTrainingTask")]);
    const began = Date.now();
    await nas.create("late", nasSpec);
    await jobs.create("late", jobSpec);
    const [n, j] = await Promise.all([
      nas.waitForCondition("late", "Ready", "True", "Available", 60_000),
      jobs.waitFor("late", running, 60_000),
    ]);
    expect(remote("late").nas.map((r) => r.id)).toEqual([
      (n.status as { storageId: string }).storageId,
    ]);
    expect(remote("late").tasks.map((r) => r.id)).toEqual([
      (j.status as { taskId: string }).taskId,
    ]);
    expect(await creates(op, "subscribeNas", "late")).toHaveLength(1);
    expect(await creates(op, "createTrainingTask", "late")).toHaveLength(1);
    // It looked them up again and again, past the 10 s after which it used to create anew.
    expect(Date.now() - began).toBeGreaterThanOrEqual(29_000);
    expect((await op.admin.requests({ endpoint: "listNas" })).length).toBeGreaterThan(3);
    await nas.waitForEvents("late", ["Recovered"]);
    await jobs.waitForEvents("late", ["Recovered"]);
  }, 90_000);
});

describe("a task create that acts and answers HTTP 500, listed without env", () => {
  it("is adopted by the token its detail shows, never created again", async () => {
    const { op, jobs } = await start("no-env-list");
    emulator.state.behaviour.listsOmitEnv = true;
    emulator.faults.set([actsThenFails("createTrainingTask")]);
    await jobs.create("bare", jobSpec);
    const j = await jobs.waitFor("bare", running, 30_000);
    expect(remote("bare").tasks.map((r) => r.id)).toEqual([
      (j.status as { taskId: string }).taskId,
    ]);
    expect(await creates(op, "createTrainingTask", "bare")).toHaveLength(1);
    await jobs.waitForEvents("bare", ["Recovered"]);
  }, 60_000);
});

describe("after the list visibility window", () => {
  it("creates again by itself a create that failed without acting, once two complete listings lack it", async () => {
    const { op, nas } = await start("outcome-auto", 3_000);
    // A 500 that did NOT act; the service recovers at once.
    emulator.faults.set([{ kind: "error", endpoint: "subscribeNas", httpStatus: 500, times: 1 }]);
    await nas.create("auto", nasSpec);
    const looking = await nas.waitForCondition("auto", "Synced", "False", "CreateOutcomePending");
    expect(conditionOf(looking, "Synced")?.message).toMatch(/until \d{4}-\d\d-\d\dT/);
    await nas.waitForCondition("auto", "Ready", "True", "Available", 30_000);
    expect(await creates(op, "subscribeNas", "auto")).toHaveLength(2);
    expect(remote("auto").nas).toHaveLength(1);
    const tokens = new Set(
      (await creates(op, "subscribeNas", "auto")).map((e) => JSON.stringify(e.body)),
    );
    expect(tokens.size).toBe(2);
    await nas.waitForEvents("auto", ["CreateRepeated"]);
  }, 60_000);

  it("finds by its token, never creating a second, a create that acted and answered 500", async () => {
    const { op, nas } = await start("outcome-acted", 3_000);
    emulator.faults.set([actsThenFails("subscribeNas")]);
    await nas.create("acted", nasSpec);
    await nas.waitForCondition("acted", "Ready", "True", "Available", 30_000);
    await new Promise((r) => setTimeout(r, 4_000));
    expect(await creates(op, "subscribeNas", "acted")).toHaveLength(1);
    expect(remote("acted").nas).toHaveLength(1);
    expect(await nas.eventReasons("acted")).not.toContain("CreateRepeated");
  }, 60_000);

  it("with service.recreateLostCreates false, stops with CreateOutcomeUnknown, and removing create-pending creates exactly once more", async () => {
    const { op, nas } = await start("outcome-recreate", 3_000, false);
    // A 500 that did NOT act: nothing exists, but the operator cannot know that.
    emulator.faults.set([{ kind: "error", endpoint: "subscribeNas", httpStatus: 500, times: 1 }]);
    await nas.create("again", nasSpec);
    const stuck = await nas.waitForCondition("again", "Synced", "False", "CreateOutcomeUnknown");
    const message = conditionOf(stuck, "Synced")?.message ?? "";
    expect(message).toContain(`kubectl annotate nasvolume/again ${ANNOTATIONS.createPending}-`);
    expect(message).toContain(`${ANNOTATIONS.externalId}=<id>`);
    expect(conditionOf(stuck, "Ready")?.reason).toBe("CreateOutcomeUnknown");
    await nas.waitForEvents("again", ["CreateOutcomeUnknown"]);
    // Stopped: no create was sent again by itself.
    await new Promise((r) => setTimeout(r, 1_500));
    expect(await creates(op, "subscribeNas", "again")).toHaveLength(1);
    expect(remote("again").nas).toHaveLength(0);

    await nas.annotate("again", { [ANNOTATIONS.createPending]: null });
    await nas.waitForCondition("again", "Ready", "True", "Available");
    expect(await creates(op, "subscribeNas", "again")).toHaveLength(2);
    expect(remote("again").nas).toHaveLength(1);
  }, 60_000);

  it("stops with CreateOutcomeUnknown, and setting external-id adopts the task the create made", async () => {
    // A task listed later than any window: only service.recreateLostCreates false keeps
    // its create from being sent again once the list shows no task with its token.
    const { op, jobs } = await start("outcome-adopt", 3_000, false);
    emulator.state.behaviour.listVisibilityDelayMs = 600_000;
    emulator.faults.set([actsThenFails("createTrainingTask")]);
    await jobs.create("adopt", jobSpec);
    const stuck = await jobs.waitForCondition("adopt", "Synced", "False", "CreateOutcomeUnknown");
    expect(conditionOf(stuck, "Synced")?.message).toContain("kubectl annotate trainingjob/adopt");
    const [task] = remote("adopt").tasks;
    expect(task).toBeDefined();

    await jobs.annotate("adopt", { [ANNOTATIONS.externalId]: task?.id ?? "" });
    const bound = await jobs.waitFor("adopt", running);
    expect((bound.status as { taskId?: string }).taskId).toBe(task?.id);
    const settled = await jobs.waitFor("adopt", (o) => conditionOf(o, "Synced")?.status === "True");
    expect(conditionOf(settled, "Synced")?.status).toBe("True");
    expect(await creates(op, "createTrainingTask", "adopt")).toHaveLength(1);
    expect(remote("adopt").tasks).toHaveLength(1);
  }, 60_000);
});

describe("a list that shrinks while it is walked (offset paging)", () => {
  it("proves nothing absent, so a NAS whose create acted and answered 500 is never made twice", async () => {
    const { op, nas } = await start("outcome-shrink", 2_000);
    await nas.create("shrink-older", nasSpec);
    await nas.waitForCondition("shrink-older", "Ready", "True", "Available", 30_000);
    // One record a page, and page 2 as if a record of page 1 were deleted after it was
    // read: a walk of [shrink-older, shrink] (names match by substring) skips "shrink".
    Object.assign(emulator.state.behaviour, { pageSizeCap: 1, listShrinksAfterFirstPage: 1 });
    emulator.faults.set([actsThenFails("subscribeNas")]);
    await nas.create("shrink", nasSpec);
    // No walk is complete: the object stops for the user, as when no list can tell.
    await nas.waitForCondition("shrink", "Synced", "False", "CreateOutcomeUnknown", 40_000);
    await new Promise((r) => setTimeout(r, 1_500));
    expect(await nas.eventReasons("shrink")).not.toContain("CreateRepeated");
    expect(await creates(op, "subscribeNas", "shrink")).toHaveLength(1);
    expect(remote("shrink").nas).toHaveLength(1);
  }, 60_000);
});

describe("an object deleted under deletionPolicy Delete while its create's outcome is unknown", () => {
  const deleting = { ...nasSpec, deletionPolicy: "Delete" };

  it("keeps its finalizer when the list cannot tell, and deletes the resource the user then names", async () => {
    const { op, nas } = await start("outcome-delete", 3_000);
    // The NAS is made, but its token is in no listed record: the list leaves descriptions out.
    emulator.state.behaviour.listsOmitDescription = true;
    emulator.faults.set([actsThenFails("subscribeNas")]);
    await nas.create("held", deleting);
    await nas.waitForCondition("held", "Synced", "False", "CreateOutcomeUnknown", 30_000);
    const [made] = remote("held").nas;
    expect(made).toBeDefined();
    await nas.delete("held");
    const held = await nas.waitFor(
      "held",
      (o) =>
        o.metadata?.deletionTimestamp !== undefined &&
        conditionOf(o, "Ready")?.reason === "CreateOutcomeUnknown" &&
        (conditionOf(o, "Ready")?.message ?? "").includes("Deletion waits"),
    );
    const message = conditionOf(held, "Ready")?.message ?? "";
    expect(message).toContain(`kubectl annotate nasvolume/held ${ANNOTATIONS.externalId}=<id>`);
    expect(message).toContain("spec.deletionPolicy to Orphan");
    expect(conditionOf(held, "Synced")?.reason).toBe("CreateOutcomeUnknown");
    await nas.waitForEvents("held", ["CreateOutcomeUnknown"]);
    // Held: nothing deleted, nothing released, however long.
    await new Promise((r) => setTimeout(r, 2_000));
    expect(await nas.get("held")).toBeDefined();
    expect(remote("held").nas).toHaveLength(1);
    expect(await creates(op, "subscribeNas", "held")).toHaveLength(1);

    await nas.annotate("held", { [ANNOTATIONS.externalId]: made?.id ?? "" });
    await nas.waitForGone("held", 30_000);
    expect(remote("held").nas).toHaveLength(0);
  }, 90_000);

  it("is released once two complete listings prove the create made nothing", async () => {
    const { op, nas } = await start("outcome-delete-absent", 3_000);
    // A 500 that did NOT act: the listed records carry their descriptions, none the token.
    emulator.faults.set([{ kind: "error", endpoint: "subscribeNas", httpStatus: 500, times: 1 }]);
    emulator.state.behaviour.listVisibilityDelayMs = 0;
    await nas.create("never", deleting);
    await nas.waitForCondition("never", "Synced", "False", "CreateOutcomePending");
    await nas.delete("never");
    await nas.waitForGone("never", 30_000);
    expect(remote("never").nas).toHaveLength(0);
    expect(await creates(op, "subscribeNas", "never")).toHaveLength(1);
    expect(await nas.eventReasons("never")).not.toContain("CreateOutcomeUnknown");
  }, 60_000);
});
