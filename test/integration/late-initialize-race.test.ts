/**
 * LateInitialize (src/controllers/managed/observe.ts) against a user's spec edit, on
 * NasVolume, against the real API server and the emulator. The reconcile is held at its
 * read of the remote resource (`holdsFirst`, the read LateInitialize waits for) while
 * the user edits the spec; the operator's spec write then carries a stale
 * resourceVersion, the API server refuses it (409), and the next reconcile works from
 * the user's spec. The refusal is a conflict, not a failure: no Warning, Synced never False. Every version of the object is seen through a watch, so a value the
 * operator wrote and the user restored would show too.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ANNOTATIONS } from "../../src/controllers/managed/decisions.js";
import { nasVolumeController } from "../../src/controllers/nasvolume/controller.js";
import { nasVolumeCrd } from "../../src/crds/nasvolume.js";
import type { KubeStream } from "../../src/runtime/kube-transport.js";
import { SecretRedactor } from "../../src/runtime/outbound-guards.js";
import { type KubeObject, resourcePath } from "../../src/runtime/resource.js";
import { capturedLog } from "../support/captured-log.js";
import { adminKubeConfig, createNamespace } from "../support/kube.js";
import { conditionOf, EVENTS, ObjectsOf } from "../support/managed.js";
import { holdsFirst, startTestOperator, type TestOperator } from "../support/operator.js";

const NAME = "raced";
const read = holdsFirst("getNas");
const redactor = new SecretRedactor();
const { log, lines } = capturedLog(redactor);
let op: TestOperator;
let ns = "";
let nas: ObjectsOf;
let watch: KubeStream | undefined;
let stopped = false;
/** Every version of the object, in order. */
const versions: KubeObject[] = [];

beforeAll(async () => {
  ns = await createNamespace(adminKubeConfig(), "late-init");
  op = await startTestOperator({
    controllers: [nasVolumeController],
    namespaces: [ns],
    // The NAS made outside the cluster may be bound here (tenancy.ts).
    config: { adoption: { namespaces: [ns] } },
    service: { endpoints: { deleteNas: "DELETE /v1/nasStorage/instance/{id}" } },
    makeService: read.makeService,
    log,
    redactor,
  });
  nas = new ObjectsOf(op.kube, nasVolumeCrd, ns);
  // A watch the API server ends is opened again from the last version seen.
  let last: string | undefined;
  const open = async (): Promise<void> => {
    watch = await op.kube.transport.watch(
      resourcePath(nasVolumeCrd, ns),
      last ? { resourceVersion: last } : {},
      (_type, obj) => {
        last = obj.metadata?.resourceVersion ?? last;
        if (obj.metadata?.name === NAME) versions.push(obj);
      },
      () => {
        if (!stopped) setTimeout(() => void open().catch(() => undefined), 200);
      },
    );
  };
  await open();
}, 60_000);

afterAll(async () => {
  stopped = true;
  read.release();
  watch?.abort();
  await op?.stop();
});

const specOf = (o: KubeObject) => (o.spec ?? {}) as { capacityGB?: number; mountPath?: string };
const statusOf = (o: KubeObject) => (o.status ?? {}) as { capacityGB?: number };

/**
 * The operator's log lines of a reconcile that ended on a 409 to a write of the object
 * itself (not its status): the refused LateInitialize write, the only such write after
 * the binding.
 */
const refusedSpecWrites = () =>
  lines
    .map(
      (l) =>
        JSON.parse(l) as {
          level: number;
          msg: string;
          reason?: string;
          err?: { message?: string };
        },
    )
    .filter((l) => l.reason === "Conflict" && /PATCH \S+\/raced: 409 /.test(l.err?.message ?? ""));

describe("LateInitialize racing a user's spec edit", () => {
  it("keeps the user's value: the operator's write, based on the spec it read, is refused with a conflict, and the object goes Ready and Synced with the user's value", async () => {
    const { nas: ids } = await op.admin.seed({ nas: [{ quotaGB: 120, mountPath: "/late" }] });
    const id = ids[0] as string;
    // capacityGB and mountPath left unset: LateInitialize would fill both from the NAS.
    await nas.create(NAME, { productCode: "nas.capacity.standard", storageId: id });
    // The reconcile has bound the NAS and now waits for its read; nothing was filled yet.
    await read.held;
    const bound = await nas.get(NAME);
    expect(bound?.metadata?.annotations?.[ANNOTATIONS.externalId]).toBe(id);
    expect(specOf(bound ?? {})).not.toHaveProperty("capacityGB");
    // The user sets the capacity meanwhile, then the read answers (quota 120).
    const edited = await nas.patchSpec(NAME, { capacityGB: 150 });
    read.release();

    // Settled: Ready and Synced for the current generation, the NAS at the spec's capacity.
    const done = await nas.waitFor(
      NAME,
      (o) =>
        conditionOf(o, "Ready")?.status === "True" &&
        conditionOf(o, "Synced")?.status === "True" &&
        conditionOf(o, "Synced")?.observedGeneration === o.metadata?.generation &&
        specOf(o).capacityGB !== undefined &&
        statusOf(o).capacityGB === specOf(o).capacityGB,
      30_000,
    );
    // The field the user set is the user's; the one left unset is filled (a later reconcile).
    expect(specOf(done)).toMatchObject({ capacityGB: 150, mountPath: "/late" });
    expect((await op.service.getNas(id)).quota).toBe("150");
    await nas.waitForEvents(NAME, ["Adopted", "LateInitialized"]);
    // The operator's write was refused, not applied: no version of the object ever had
    // the remote capacity, the user's edit is among them.
    const refused = refusedSpecWrites();
    expect(refused.length).toBeGreaterThanOrEqual(1);
    // Retried quietly, as any conflict: a debug line, no Warning Event, Synced never False.
    expect(refused.map((l) => [l.level, l.msg])).toEqual(
      refused.map(() => ["debug", "reconcile conflicted; will retry"]),
    );
    const { items } = await op.kube.list(EVENTS, ns);
    const warnings = items.filter(
      (e) => JSON.stringify(e.regarding).includes(`"${NAME}"`) && e.type === "Warning",
    );
    expect(warnings).toEqual([]);
    expect(versions.filter((v) => conditionOf(v, "Synced")?.status === "False")).toEqual([]);
    const seen = versions.map((v) => v.metadata?.resourceVersion);
    expect(seen).toContain(edited.metadata?.resourceVersion);
    expect(
      versions.map((v) => specOf(v).capacityGB).filter((c) => c !== undefined && c !== 150),
    ).toEqual([]);
  });
});
