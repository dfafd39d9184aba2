/**
 * A BlockVolume whose attach an earlier call made after the operator read the volume
 * (a process killed with the call under way): the service refuses the second attach,
 * and the operator reads again and takes the attachment for the object's, instead of
 * stopping until the object changes. The earlier call is played by attaching the
 * volume in the emulator while the operator's own attach is held.
 */
import { afterAll, describe, expect, it } from "vitest";
import { blockVolumeController } from "../../src/controllers/blockvolume/controller.js";
import { blockVolumeCrd } from "../../src/crds/blockvolume.js";
import { type RunningEmulator, startEmulator } from "../../src/emulator/server.js";
import { adminKubeConfig, createNamespace } from "../support/kube.js";
import { ObjectsOf } from "../support/managed.js";
import {
  holdsFirst,
  startTestOperator,
  TEST_API_KEY,
  type TestOperator,
} from "../support/operator.js";

describe("a BlockVolume whose attach an earlier call made after the operator's read", () => {
  let op: TestOperator | undefined;
  let emulator: RunningEmulator | undefined;

  afterAll(async () => {
    await op?.stop();
    await emulator?.stop();
  });

  it("reads again after the service refuses the second attach, and is Ready attached", async () => {
    const namespace = await createNamespace(adminKubeConfig(), "bv-lost-attach");
    emulator = await startEmulator({ apiKey: TEST_API_KEY, volumeTransitionMs: 200 });
    const hold = holdsFirst("attachVolume");
    op = await startTestOperator({
      controllers: [(deps) => blockVolumeController(deps, { visibilityGraceMs: 1_000 })],
      namespaces: [namespace],
      emulator,
      makeService: hold.makeService,
    });
    const volumes = new ObjectsOf(op.kube, blockVolumeCrd, namespace);
    await volumes.create("late", {
      sizeGB: 5,
      volumeType: "ssd",
      attachTo: { instanceId: "cci-0001" },
    });
    await hold.held;
    const made = [...emulator.state.volumes.records.values()].find((v) => v.name === "late");
    if (!made) throw new Error("the volume was not made");
    emulator.state.volumes.attach(made.id, "cci-0001");
    hold.release();
    const ready = await volumes.waitForCondition("late", "Ready", "True");
    expect(ready?.status).toMatchObject({ volumeId: made.id });
    const attaches = emulator.requestLog.read({ endpoint: "attachVolume" });
    expect(attaches.map((e) => e.status)).toEqual([409]);
    expect(emulator.state.volumes.get(made.id)).toMatchObject({
      status: "in-use",
      instanceId: "cci-0001",
    });
  }, 60_000);
});
