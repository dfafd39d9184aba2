/**
 * A create its operator never sent: the process stopped after it wrote the
 * create-pending marker and before the call went out (`holdsFirst` holds the call, and
 * the operator is stopped). The next operator finds no resource with the marker's
 * token; past the list visibility window, a BlockVolume's or FileSystem's list, whose
 * records all carry the description the token travels in, proves it absent (a
 * TrainingJob's: no task's env has it; a TrainingTemplate's: no template listed has its
 * name, the template's identity), and the
 * create is sent once more with a new token (Warning CreateRepeated). A service whose
 * lists leave the description out (`listsOmitDescription`) proves nothing once it lists
 * any record: the object stops with CreateOutcomeUnknown and nothing is created. A task
 * list without env (`listsOmitEnv`) still proves absence: each task is read in detail.
 */
import { afterEach, describe, expect, it } from "vitest";
import { blockVolumeController } from "../../src/controllers/blockvolume/controller.js";
import { fileSystemController } from "../../src/controllers/filesystem/controller.js";
import type { ControllerFactory } from "../../src/controllers/index.js";
import { ANNOTATIONS } from "../../src/controllers/managed/decisions.js";
import { trainingJobController } from "../../src/controllers/trainingjob/controller.js";
import { trainingTemplateController } from "../../src/controllers/trainingtemplate/controller.js";
import { blockVolumeCrd } from "../../src/crds/blockvolume.js";
import { fileSystemCrd } from "../../src/crds/filesystem.js";
import { trainingJobCrd } from "../../src/crds/trainingjob.js";
import { trainingTemplateCrd } from "../../src/crds/trainingtemplate.js";
import {
  type EmulatorOptions,
  type RunningEmulator,
  startEmulator,
} from "../../src/emulator/server.js";
import type { ResourceDescriptor } from "../../src/runtime/resource.js";
import { adminKubeConfig, createNamespace } from "../support/kube.js";
import { ObjectsOf } from "../support/managed.js";
import {
  holdsFirst,
  startTestOperator,
  TEST_API_KEY,
  type TestOperator,
} from "../support/operator.js";

const WINDOW_MS = 2_000;

interface Kind {
  crd: ResourceDescriptor;
  controller: ControllerFactory;
  endpoint: string;
  /** The create's path, and a body of a resource made outside the cluster. */
  path: string;
  foreign: Record<string, unknown>;
  spec: Record<string, unknown>;
  /** The names of the remote resources of the kind. */
  remoteNames: (emulator: RunningEmulator) => string[];
}

const job = {
  image: "registry.example.com/ml/train:1",
  productCode: "train.cpu.16",
  workerCount: 1,
};
const KINDS: Record<string, Kind> = {
  BlockVolume: {
    crd: blockVolumeCrd,
    controller: (deps) => blockVolumeController(deps, { visibilityGraceMs: WINDOW_MS }),
    endpoint: "createVolume",
    path: "/v1/volumes",
    foreign: { name: "made-elsewhere", sizeGB: 1, volumeType: "ssd" },
    spec: { sizeGB: 20, volumeType: "ssd" },
    remoteNames: (e) => [...e.state.volumes.records.values()].map((v) => v.name),
  },
  FileSystem: {
    crd: fileSystemCrd,
    controller: (deps) => fileSystemController(deps, { visibilityGraceMs: WINDOW_MS }),
    endpoint: "createFileSystem",
    path: "/v1/file-systems",
    foreign: { name: "made-elsewhere", sizeGB: 1 },
    spec: { sizeGB: 10, mounts: [] },
    remoteNames: (e) => [...e.state.fileSystems.byId.values()].map((f) => f.name),
  },
  TrainingJob: {
    crd: trainingJobCrd,
    controller: (deps) => trainingJobController(deps, { visibilityGraceMs: WINDOW_MS }),
    endpoint: "createTrainingTask",
    path: "/v1/subscription/training/create",
    foreign: { ...job, name: "made-elsewhere", createType: "DIRECT" },
    spec: job,
    remoteNames: (e) => [...e.state.tasks.values()].map((t) => t.name),
  },
  TrainingTemplate: {
    crd: trainingTemplateCrd,
    controller: (deps) => trainingTemplateController(deps, { visibilityGraceMs: WINDOW_MS }),
    endpoint: "createTemplate",
    path: "/v1/training/template/create",
    foreign: { name: "made-elsewhere" },
    spec: job,
    remoteNames: (e) => [...e.state.templates.values()].map((t) => String(t.fields.name)),
  },
};
/** The kinds whose token travels in the description. */
const DESCRIBED = ["BlockVolume", "FileSystem"];

const started: TestOperator[] = [];
const emulators: RunningEmulator[] = [];

afterEach(async () => {
  for (const op of started.splice(0)) await op.stop();
  for (const e of emulators.splice(0)) await e.stop();
});

/** What the emulator's lists leave out. */
type ListModes = Pick<EmulatorOptions, "listsOmitDescription" | "listsOmitEnv">;

/**
 * The object `name` of `kind` left as a process stopped between its create-pending
 * write and its create call leaves it, beside a resource of the kind made outside the
 * cluster, and an operator started after it.
 */
async function leftUnsent(kind: Kind, name: string, lists: ListModes = {}) {
  const emulator = await startEmulator({
    apiKey: TEST_API_KEY,
    volumeTransitionMs: 0,
    fileStorageDelayMs: 0,
    ...lists,
  });
  emulators.push(emulator);
  const made = await fetch(`${emulator.url}${kind.path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${TEST_API_KEY}`, "content-type": "application/json" },
    body: JSON.stringify(kind.foreign),
  });
  expect(made.status).toBe(200);
  const namespace = await createNamespace(adminKubeConfig(), "lost-create");
  const held = holdsFirst(kind.endpoint);
  const first = await startTestOperator({
    controllers: [kind.controller],
    namespaces: [namespace],
    emulator,
    shutdownTimeoutMs: 300,
    makeService: held.makeService,
    stopsMidCreate: true,
  });
  started.push(first);
  const objects = new ObjectsOf(first.kube, kind.crd, namespace);
  await objects.create(name, kind.spec);
  await held.held;
  await first.stop();
  const marker = (await objects.get(name))?.metadata?.annotations?.[ANNOTATIONS.createPending];
  expect(marker).toContain("token");
  const second = await startTestOperator({
    controllers: [kind.controller],
    namespaces: [namespace],
    emulator,
  });
  started.push(second);
  const creates = () =>
    emulator.requestLog
      .read({ endpoint: kind.endpoint })
      .filter((e) => (e.body as { name?: string }).name === name);
  return { emulator, objects: new ObjectsOf(second.kube, kind.crd, namespace), creates };
}

describe.each(Object.keys(KINDS))("a %s create never sent", (kindName) => {
  const kind = KINDS[kindName] as Kind;

  it("is sent once more, with a new token, once two complete listings after the window lack its token", async () => {
    const { emulator, objects, creates } = await leftUnsent(kind, "unsent");
    await objects.waitForCondition("unsent", "Ready", "True", undefined, 30_000);
    await objects.waitForEvents("unsent", ["CreateRepeated"]);
    // The Event names the window the proof rests on, and what a later create would make.
    expect(await objects.eventNotes("unsent", "CreateRepeated")).toEqual([
      expect.stringMatching(
        /after the visibility window \(2 s, service\.listVisibilityWindowMs\) that followed the last moment it could take effect, \d{4}-.*later than the window, this would make a second resource/,
      ),
    ]);
    expect(creates()).toHaveLength(1);
    expect(kind.remoteNames(emulator).filter((n) => n === "unsent")).toHaveLength(1);
  }, 60_000);
});

describe.each(DESCRIBED)("a %s create never sent", (kindName) => {
  const kind = KINDS[kindName] as Kind;

  it("stops with CreateOutcomeUnknown, creating nothing, when the list leaves out the description", async () => {
    const { emulator, objects, creates } = await leftUnsent(kind, "unproven", {
      listsOmitDescription: true,
    });
    await objects.waitForCondition("unproven", "Synced", "False", "CreateOutcomeUnknown", 30_000);
    // Stopped: nothing is created by itself.
    await new Promise((r) => setTimeout(r, 1_500));
    expect(creates()).toHaveLength(0);
    expect(kind.remoteNames(emulator)).toEqual(["made-elsewhere"]);
    expect(await objects.eventReasons("unproven")).not.toContain("CreateRepeated");
  }, 60_000);
});

describe("a TrainingJob create never sent, on a task list without env", () => {
  it("is sent once more once two complete listings, each task's env read in detail, lack its token", async () => {
    const kind = KINDS.TrainingJob as Kind;
    const { emulator, objects, creates } = await leftUnsent(kind, "bare", { listsOmitEnv: true });
    await objects.waitForCondition("bare", "Ready", "True", undefined, 30_000);
    await objects.waitForEvents("bare", ["CreateRepeated"]);
    expect(creates()).toHaveLength(1);
    expect(kind.remoteNames(emulator).filter((n) => n === "bare")).toHaveLength(1);
    // The task made elsewhere, listed without env, was read in detail once: its env kept.
    const [foreign] = [...emulator.state.tasks.values()].filter((t) => t.name === "made-elsewhere");
    const details = emulator.requestLog
      .read({ endpoint: "getTrainingTask" })
      .filter((e) => e.path.includes(foreign?.id ?? "-"));
    expect(details).toHaveLength(1);
  }, 60_000);
});
