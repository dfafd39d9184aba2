/**
 * A second tenant for FileSystem, TrainingJob and TrainingTemplate (as BlockVolume and
 * NasVolume in service-connections.test.ts): two namespaces bound to two
 * ServiceConnections, two accounts of one emulator, objects of the same name in both.
 * Each object creates in its own account (a create that acts then fails is found again
 * there, never in the other), never sees or adopts the other account's resources (a
 * template is found by name: the other account's of that name is not its own), and
 * settled objects are polled in their own account only.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { serviceConnectionController } from "../../src/controllers/connections/controller.js";
import { fileSystemController } from "../../src/controllers/filesystem/controller.js";
import { trainingJobController } from "../../src/controllers/trainingjob/controller.js";
import { trainingTemplateController } from "../../src/controllers/trainingtemplate/controller.js";
import { fileSystemCrd } from "../../src/crds/filesystem.js";
import { trainingJobCrd } from "../../src/crds/trainingjob.js";
import { trainingTemplateCrd } from "../../src/crds/trainingtemplate.js";
import type { RequestLogEntry } from "../../src/emulator/request-log.js";
import { type RunningEmulator, startEmulator } from "../../src/emulator/server.js";
import type { KubeObject, ResourceDescriptor } from "../../src/runtime/resource.js";
import { ServiceClient } from "../../src/service/client.js";
import { adminKubeConfig, createNamespace } from "../support/kube.js";
import { ObjectsOf } from "../support/managed.js";
import { startTestOperator, TEST_API_KEY, type TestOperator } from "../support/operator.js";
import { connectTwoTeams, removeConnections } from "../support/two-teams.js";

const KEY_A = "team-a-kinds-key-0001";
const KEY_B = "team-b-kinds-key-0001";
const JOB = {
  image: "registry.example.com/ml/train:1",
  productCode: "train.cpu.16",
  workerCount: 1,
};
const TEMPLATE = {
  description: "nightly fine-tune",
  trainingType: "PRE_TRAINING",
  trainingFramework: "PyTorch",
  imageType: "general",
  image: "registry.example.com/ml/train:1",
  productCode: "train.cpu.16",
  workerCount: 1,
};

let op: TestOperator;
let emulator: RunningEmulator;
let ops = "";
let teamA = "";
let teamB = "";
let connA = "";
let connB = "";
const of = (crd: ResourceDescriptor, ns: string) => new ObjectsOf(op.kube, crd, ns);

/** The requests to `endpoint` made from `since` on. */
async function requestsSince(endpoint: string, since: number): Promise<RequestLogEntry[]> {
  return (await op.admin.requests({ endpoint })).filter((r) => Date.parse(String(r.time)) >= since);
}

/** Every request whose path names `id` was made in `tenant`'s account. */
async function idOnlyIn(id: string, tenant: string): Promise<void> {
  const touching = (await op.admin.requests()).filter((r) => r.path.includes(`/${id}`));
  expect(touching.length).toBeGreaterThan(0);
  expect(new Set(touching.map((r) => r.tenant))).toEqual(new Set([tenant]));
}

/** Both teams' objects `name` of `crd`: team-a's names its connection, team-b's namespace does. */
async function createInBoth(crd: ResourceDescriptor, name: string, spec: Record<string, unknown>) {
  await of(crd, teamA).create(name, { ...spec, connectionRef: { name: connA } });
  await of(crd, teamB).create(name, spec);
}

beforeAll(async () => {
  const kc = adminKubeConfig();
  [ops, teamA, teamB] = await Promise.all([
    createNamespace(kc, "kinds-ops"),
    createNamespace(kc, "kinds-a"),
    createNamespace(kc, "kinds-b"),
  ]);
  connA = `${teamA}-account`;
  connB = `${teamB}-account`;
  emulator = await startEmulator({
    apiKey: TEST_API_KEY,
    subscriptionDelayMs: 300,
    fileStorageDelayMs: 200,
    tenants: [
      { name: "a", apiKey: KEY_A },
      { name: "b", apiKey: KEY_B },
    ],
  });
  op = await startTestOperator({
    controllers: [
      fileSystemController,
      trainingJobController,
      trainingTemplateController,
      serviceConnectionController,
    ],
    namespaces: [teamA, teamB],
    emulator,
    config: { connections: { secretNamespace: ops }, pollIntervalMs: { default: 500 } },
  });
  await connectTwoTeams(op.kube, {
    ...{ ops, teamA, teamB, connA, connB },
    ...{ keyA: KEY_A, keyB: KEY_B, baseUrl: emulator.url },
  });
}, 60_000);

afterAll(async () => {
  // Orphaned (the default policy), so that the connections are free to go.
  for (const crd of [fileSystemCrd, trainingJobCrd, trainingTemplateCrd]) {
    for (const ns of [teamA, teamB]) {
      const { items } = await op.kube.list<KubeObject>(crd, ns);
      for (const o of items) await of(crd, ns).delete(o.metadata?.name ?? "");
      for (const o of items) await of(crd, ns).waitForGone(o.metadata?.name ?? "");
    }
  }
  await removeConnections(op?.kube, [connA, connB]);
  await op?.stop();
  await emulator?.stop();
}, 60_000);

describe("a second tenant", () => {
  it("creates each team's FileSystem of one name once, in its own account, through a create that acted and then failed", async () => {
    emulator.faults.set([
      { kind: "error", endpoint: "createFileSystem", acting: true, httpStatus: 500, times: 2 },
    ]);
    await createInBoth(fileSystemCrd, "scratch", { sizeGB: 10, mounts: [] });
    const ids: Record<string, string> = {};
    for (const [ns, tenant] of [
      [teamA, "a"],
      [teamB, "b"],
    ] as const) {
      const ready = await of(fileSystemCrd, ns).waitForCondition(
        "scratch",
        "Ready",
        "True",
        undefined,
        30_000,
      );
      ids[tenant] = String((ready.status as { fileSystemId?: string }).fileSystemId);
      const remote = (await op.admin.state(tenant)).fileSystems;
      expect(remote.map((f) => [f.name, f.id])).toEqual([["scratch", ids[tenant]]]);
    }
    expect((await op.admin.state()).fileSystems).toEqual([]);
    const creates = await op.admin.requests({ endpoint: "createFileSystem" });
    expect(creates.map((r) => [r.tenant, r.acted]).sort()).toEqual([
      ["a", true],
      ["b", true],
    ]);
    // Settled, each file system is polled in its own account only.
    const since = Date.now();
    await new Promise((r) => setTimeout(r, 2_000));
    const reads = await requestsSince("getFileSystem", since);
    expect(new Set(reads.map((r) => r.tenant))).toEqual(new Set(["a", "b"]));
    await idOnlyIn(ids.a ?? "", "a");
    await idOnlyIn(ids.b ?? "", "b");
    // Team b naming team a's file system adopts nothing: it is bound already (ids are
    // unique across accounts), and nothing is sent for it, to either account.
    const before = (await op.admin.requests()).at(-1)?.seq ?? 0;
    await of(fileSystemCrd, teamB).create("borrowed", { sizeGB: 10, fileSystemId: ids.a });
    await of(fileSystemCrd, teamB).waitForCondition(
      "borrowed",
      "Ready",
      "False",
      "AlreadyBoundRefused",
    );
    await new Promise((r) => setTimeout(r, 1_000));
    const borrowed = await of(fileSystemCrd, teamB).get("borrowed");
    expect(
      (borrowed?.status as { fileSystemId?: string } | undefined)?.fileSystemId,
    ).toBeUndefined();
    const asked = (await op.admin.requests({ since: before })).filter((r) =>
      r.path.includes(`/${ids.a}`),
    );
    expect(asked.filter((r) => r.tenant !== "a")).toEqual([]);
    expect((await op.admin.state("a")).fileSystems.map((f) => f.id)).toEqual([ids.a]);
  }, 60_000);

  it("creates each team's TrainingJob of one name once, in its own account, through a create that acted and then failed", async () => {
    emulator.faults.set([
      { kind: "error", endpoint: "createTrainingTask", acting: true, httpStatus: 500, times: 2 },
    ]);
    await createInBoth(trainingJobCrd, "train", JOB);
    const running = (o: KubeObject) =>
      (o.status as { phase?: string } | undefined)?.phase === "Running";
    const ids: Record<string, string> = {};
    for (const [ns, tenant] of [
      [teamA, "a"],
      [teamB, "b"],
    ] as const) {
      const job = await of(trainingJobCrd, ns).waitFor("train", running, 30_000);
      ids[tenant] = String((job.status as { taskId?: string }).taskId);
      const remote = (await op.admin.state(tenant)).tasks;
      expect(remote.map((t) => [t.name, t.id])).toEqual([["train", ids[tenant]]]);
    }
    expect((await op.admin.state()).tasks).toEqual([]);
    const creates = await op.admin.requests({ endpoint: "createTrainingTask" });
    expect(creates.map((r) => [r.tenant, r.acted]).sort()).toEqual([
      ["a", true],
      ["b", true],
    ]);
    // Settled, each account's jobs are polled from that account's task list walk.
    const since = Date.now();
    await new Promise((r) => setTimeout(r, 2_000));
    const lists = await requestsSince("listTrainingTasks", since);
    expect(new Set(lists.map((r) => r.tenant))).toEqual(new Set(["a", "b"]));
    await idOnlyIn(ids.a ?? "", "a");
    await idOnlyIn(ids.b ?? "", "b");
  }, 60_000);

  it("finds a TrainingTemplate by name in its own account only: the other account's of that name is neither taken nor adopted", async () => {
    // Account a has a template named "nightly" that no object made.
    const clientA = new ServiceClient({
      baseUrl: emulator.url,
      apiKey: () => KEY_A,
      rateLimit: null,
    });
    await clientA.createTemplate({ name: "nightly", image: "registry.example.com/other:1" });
    clientA.close();
    const [theirs] = (await op.admin.state("a")).templates.map((t) => String(t.id));

    // Team b's template of that name is created in account b, as if a's did not exist.
    await of(trainingTemplateCrd, teamB).create("nightly", TEMPLATE);
    const made = await of(trainingTemplateCrd, teamB).waitForCondition(
      "nightly",
      "Ready",
      "True",
      "Available",
      30_000,
    );
    const ours = made.metadata?.annotations?.["aidc.io/external-id"] ?? "";
    expect(ours).not.toBe(theirs);
    expect((await op.admin.state("b")).templates.map((t) => [t.name, t.id])).toEqual([
      ["nightly", ours],
    ]);
    // Team a's own account has that name already: refused there, nothing created.
    await of(trainingTemplateCrd, teamA).create("nightly", {
      ...TEMPLATE,
      connectionRef: { name: connA },
    });
    await of(trainingTemplateCrd, teamA).waitForCondition(
      "nightly",
      "Ready",
      "False",
      "NameTakenRefused",
      30_000,
    );
    expect((await op.admin.state("a")).templates.map((t) => String(t.id))).toEqual([theirs]);
    const creates = await op.admin.requests({ endpoint: "createTemplate" });
    expect(creates.map((r) => r.tenant).sort()).toEqual(["a", "b"]);
    // Settled, b's template is polled from b's own template list.
    const since = Date.now();
    await new Promise((r) => setTimeout(r, 2_000));
    // (Templates have no detail read.) Team a's refused object checks its name again in
    // a's own account, each poll: that name alone.
    const lists = await requestsSince("listTemplates", since);
    expect(new Set(lists.map((r) => r.tenant))).toEqual(new Set(["a", "b"]));
    const checks = lists.filter((r) => r.tenant === "a").map((r) => r.query.name);
    expect(new Set(checks)).toEqual(new Set(["nightly"]));
  }, 60_000);
});
