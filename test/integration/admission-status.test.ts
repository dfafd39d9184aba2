/**
 * The operator's status writes under a mutating webhook on the status subresource that
 * changes a field the operator writes (docs/troubleshooting.md, Admission control): the
 * same status is not written again at the same generation, a Warning `WriteNotKept`
 * says so once, and a change of the status that follows is still written.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { nasVolumeController } from "../../src/controllers/nasvolume/controller.js";
import { nasVolumeCrd } from "../../src/crds/nasvolume.js";
import type { KubeObject } from "../../src/runtime/resource.js";
import { AdmissionWebhook, registerWebhook } from "../support/admission.js";
import { adminKubeConfig, createNamespace, eventually } from "../support/kube.js";
import { ObjectsOf } from "../support/managed.js";
import { startTestOperator, type TestOperator } from "../support/operator.js";

const SPEC = { productCode: "nas.capacity.standard", capacityGB: 100 };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const statusWrites = (hook: AdmissionWebhook, name: string) =>
  hook.writesOf(name).filter((w) => w === "UPDATE/status").length;

describe("admission control of status writes", () => {
  let op: TestOperator;
  let nas: ObjectsOf;
  let namespace = "";
  const hook = new AdmissionWebhook();
  let remove: (() => Promise<void>) | undefined;

  beforeAll(async () => {
    namespace = await createNamespace(adminKubeConfig(), "admission-status");
    op = await startTestOperator({
      controllers: [(deps) => nasVolumeController(deps, { visibilityGraceMs: 1_000 })],
      namespaces: [namespace],
    });
    nas = new ObjectsOf(op.kube, nasVolumeCrd, namespace);
    await hook.start();
    // Rewrites the service's status the operator mirrors, on every status write.
    hook.handler = (req) =>
      req.object?.metadata?.labels?.scenario === "rewritten" &&
      (req.object.status as { remoteStatus?: string } | undefined)?.remoteStatus
        ? {
            allowed: true,
            patch: [{ op: "replace", path: "/status/remoteStatus", value: "rewritten" }],
          }
        : { allowed: true };
    remove = await registerWebhook(
      op.kube,
      "mutating",
      hook,
      { name: "status.admission.test", resources: ["nasvolumes/status"], namespace },
      { res: nasVolumeCrd, spec: SPEC },
    );
  }, 60_000);

  afterAll(async () => {
    await remove?.().catch(() => undefined);
    await op?.stop();
    await hook.stop();
  });

  it("writes a status the webhook changes once per generation, says so once, and writes what changes after", async () => {
    await op.kube.create(nasVolumeCrd, {
      metadata: { name: "rewritten", namespace, labels: { scenario: "rewritten" } },
      spec: SPEC,
    } as KubeObject);
    const ready = await nas.waitForCondition("rewritten", "Ready", "True");
    expect((ready.status as { remoteStatus?: string }).remoteStatus).toBe("rewritten");
    await sleep(1_000);
    const atReady = statusWrites(hook, "rewritten");
    // Ten polls of the settled object (500 ms): the same status is not sent again.
    await sleep(5_000);
    expect(statusWrites(hook, "rewritten") - atReady).toBe(0);
    await eventually(async () => (await nas.eventCount("rewritten", "WriteNotKept")) > 0);
    expect(await nas.eventCount("rewritten", "WriteNotKept")).toBe(1);
    expect((await nas.eventNotes("rewritten", "WriteNotKept"))[0]).toMatch(
      /status update .*remoteStatus/,
    );
    // A spec change is a new generation: its status is written.
    await nas.patchSpec("rewritten", { capacityGB: 200 });
    await nas.waitFor(
      "rewritten",
      (o) => (o.status as { capacityGB?: number } | undefined)?.capacityGB === 200,
    );
  }, 60_000);
});
