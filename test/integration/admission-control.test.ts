import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fileSystemController } from "../../src/controllers/filesystem/controller.js";
import { ANNOTATIONS } from "../../src/controllers/managed/decisions.js";
import { CONFIG_MAPS, EXPORTED_LABEL } from "../../src/controllers/managed/export.js";
import { nasVolumeController } from "../../src/controllers/nasvolume/controller.js";
import { freePort } from "../../src/controlplane/controlplane.js";
import { fileSystemCrd } from "../../src/crds/filesystem.js";
import { nasVolumeCrd } from "../../src/crds/nasvolume.js";
import type { KubeObject, ResourceDescriptor } from "../../src/runtime/resource.js";
import {
  type AdmissionRequest,
  AdmissionWebhook,
  mutatingPoliciesServed,
  registerMutatingPolicy,
  registerPolicy,
  registerWebhook,
  type WebhookOptions,
} from "../support/admission.js";
import { adminKubeConfig, createNamespace, eventually } from "../support/kube.js";
import { conditionOf, ObjectsOf } from "../support/managed.js";
import { startTestOperator, type TestOperator } from "../support/operator.js";

const SPEC = { productCode: "nas.capacity.standard", capacityGB: 100 };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const labelOf = (req: AdmissionRequest) => req.object?.metadata?.labels?.scenario;
const finalizersOf = (o: KubeObject | undefined) => o?.metadata?.finalizers ?? [];
const mountPathOf = (o: KubeObject | undefined) => (o?.spec as { mountPath?: string })?.mountPath;

/**
 * The operator in a cluster with admission control (docs/troubleshooting.md, Admission
 * control): webhooks the test serves and ValidatingAdmissionPolicies of the API server,
 * each scoped to the test's namespace, mutating or refusing the operator's writes.
 */
describe("admission control", () => {
  let op: TestOperator;
  let nas: ObjectsOf;
  let namespace = "";
  const hook = new AdmissionWebhook();
  const probe = { res: nasVolumeCrd, spec: SPEC };
  /** Removals of what a test registered, should it fail before it removes them. */
  const leftovers: Array<() => Promise<void>> = [];

  beforeAll(async () => {
    namespace = await createNamespace(adminKubeConfig(), "admission");
    op = await startTestOperator({
      controllers: [
        (deps) => nasVolumeController(deps, { visibilityGraceMs: 1_000 }),
        (deps) => fileSystemController(deps, { visibilityGraceMs: 1_000 }),
      ],
      namespaces: [namespace],
      emulatorOptions: { fileStorageDelayMs: 300 },
      service: { endpoints: { deleteNas: "DELETE /v1/nasStorage/instance/{id}" } },
      config: { holdBackoff: { baseMs: 1_000, maxMs: 2_000 } },
    });
    nas = new ObjectsOf(op.kube, nasVolumeCrd, namespace);
    await hook.start();
  }, 60_000);

  afterAll(async () => {
    for (const remove of leftovers) await remove().catch(() => undefined);
    await op?.stop();
    await hook.stop();
  });

  const labelled = (
    name: string,
    scenario: string,
    spec: Record<string, unknown> = SPEC,
    res: ResourceDescriptor = nasVolumeCrd,
  ) =>
    op.kube.create(res, {
      metadata: { name, namespace, labels: { scenario } },
      spec,
    } as KubeObject);
  const subscribes = async (name: string) =>
    (await op.admin.requests({ endpoint: "subscribeNas" })).filter(
      (r) => (r.body as { storageParams?: { name?: string } }).storageParams?.name === name,
    ).length;
  const fsCreates = async (name: string) =>
    (await op.admin.requests({ endpoint: "createFileSystem" })).filter(
      (r) => (r.body as { name?: string }).name === name,
    ).length;

  /** Runs `body` while a webhook of `hook` (in the namespace) is registered. */
  const withWebhook = async (
    kind: "mutating" | "validating",
    options: Omit<WebhookOptions, "namespace">,
    body: () => Promise<void>,
  ) => {
    const remove = await registerWebhook(op.kube, kind, hook, { ...options, namespace }, probe);
    try {
      await body();
    } finally {
      await remove();
    }
  };

  it("adds no write of its own to a webhook's label and annotation on every write (no echo loop)", async () => {
    let writes = 0;
    hook.handler = (req) => {
      if (labelOf(req) !== "stamped") return { allowed: true };
      const annotations = req.object?.metadata?.annotations;
      return {
        allowed: true,
        patch: [
          ...(annotations ? [] : [{ op: "add", path: "/metadata/annotations", value: {} }]),
          { op: "add", path: "/metadata/annotations/policy.test~1write", value: `${++writes}` },
          { op: "add", path: "/metadata/labels/policy.test~1team", value: "storage" },
        ],
      };
    };
    await withWebhook(
      "mutating",
      { name: "stamp.admission.test", resources: ["nasvolumes", "nasvolumes/status"] },
      async () => {
        await labelled("stamped", "stamped");
        const ready = await nas.waitForCondition("stamped", "Ready", "True");
        expect(ready.metadata?.labels?.["policy.test/team"]).toBe("storage");
        await sleep(1_000);
        const atReady = writes;
        // Ten polls of the settled object: each reads, none writes.
        await sleep(5_000);
        expect(writes - atReady).toBe(0);
        expect(await subscribes("stamped")).toBe(1);
      },
    );
  }, 60_000);

  it("sends no create while a mutating webhook strips its marker, names it WriteNotKept, and creates once when it stops", async () => {
    let stripping = true;
    hook.handler = (req) => {
      if (!stripping || labelOf(req) !== "stripped" || req.operation !== "UPDATE") {
        return { allowed: true };
      }
      const annotations = Object.keys(req.object?.metadata?.annotations ?? {});
      const patch = annotations
        .filter((k) => k.startsWith("aidc.io/"))
        .map((k) => ({ op: "remove", path: `/metadata/annotations/${k.replace("/", "~1")}` }));
      return { allowed: true, patch };
    };
    await withWebhook(
      "mutating",
      { name: "strip.admission.test", resources: ["nasvolumes"] },
      async () => {
        await labelled("stripped", "stripped");
        const held = await nas.waitForCondition("stripped", "Synced", "False", "WriteNotKept");
        expect(conditionOf(held, "Synced")?.message).toContain(
          "its answer does not show annotation aidc.io/create-pending as written",
        );
        expect(conditionOf(held, "Stalled")).toMatchObject({ status: "True" });
        await nas.waitForEvents("stripped", ["WriteNotKept"]);
        // Held retries (1-2 s here) meet the webhook again: still no order.
        await sleep(4_000);
        expect(await subscribes("stripped")).toBe(0);
        stripping = false;
        const ready = await nas.waitForCondition("stripped", "Ready", "True");
        expect(ready.metadata?.annotations?.[ANNOTATIONS.externalId]).toBeTruthy();
        expect(await subscribes("stripped")).toBe(1);
      },
    );
  }, 60_000);

  it("sends no create while a mutating webhook strips its finalizer: WriteNotKept names it", async () => {
    hook.handler = (req) => {
      const finalizers = finalizersOf(req.object);
      if (labelOf(req) !== "unfinalized" || !finalizers.includes("aidc.io/nasvolume")) {
        return { allowed: true };
      }
      const value = finalizers.filter((f) => f !== "aidc.io/nasvolume");
      return { allowed: true, patch: [{ op: "replace", path: "/metadata/finalizers", value }] };
    };
    await withWebhook(
      "mutating",
      { name: "strip-finalizer.admission.test", resources: ["nasvolumes"] },
      async () => {
        await labelled("unfinalized", "unfinalized");
        const held = await nas.waitForCondition("unfinalized", "Synced", "False", "WriteNotKept");
        expect(conditionOf(held, "Synced")?.message).toContain(
          "does not show finalizer aidc.io/nasvolume as written",
        );
        await sleep(3_000);
        expect(await subscribes("unfinalized")).toBe(0);
      },
    );
  }, 60_000);

  it("under a MutatingAdmissionPolicy as under a webhook: keeps its labels with no echo, names the marker and finalizer it strips WriteNotKept, orders once it goes", async (ctx) => {
    // Kubernetes before 1.36 serves no MutatingAdmissionPolicy by default: nothing to test.
    if (!(await mutatingPoliciesServed(op.kube))) ctx.skip();
    const of = (scenario: string) =>
      `has(object.metadata.labels) && object.metadata.labels[?'scenario'].orValue('') == '${scenario}'`;
    const remove = await registerMutatingPolicy(
      op.kube,
      { name: "mutate.admission.test", namespace, resources: ["nasvolumes", "nasvolumes/status"] },
      [
        {
          patchType: "ApplyConfiguration",
          applyConfiguration: {
            expression: `${of("policy-stamped")} ? Object{metadata: Object.metadata{labels: {'policy.test/team': 'storage'}}} : Object{}`,
          },
        },
        {
          patchType: "JSONPatch",
          jsonPatch: {
            expression: `${of("policy-stripped")} && request.operation == 'UPDATE' && has(object.metadata.annotations) ? object.metadata.annotations.filter(k, k.startsWith('aidc.io/')).map(k, JSONPatch{op: 'remove', path: '/metadata/annotations/' + jsonpatch.escapeKey(k)}) : []`,
          },
        },
        {
          patchType: "JSONPatch",
          jsonPatch: {
            expression: `${of("policy-unfinalized")} && has(object.metadata.finalizers) ? [JSONPatch{op: 'replace', path: '/metadata/finalizers', value: object.metadata.finalizers.filter(f, f != 'aidc.io/nasvolume')}] : []`,
          },
        },
      ],
      probe,
    );
    leftovers.push(remove);
    await labelled("policy-stamped", "policy-stamped");
    await labelled("policy-stripped", "policy-stripped");
    await labelled("policy-unfinalized", "policy-unfinalized");
    const [ready, stripped, unfinalized] = await Promise.all([
      nas.waitForCondition("policy-stamped", "Ready", "True"),
      nas.waitForCondition("policy-stripped", "Synced", "False", "WriteNotKept"),
      nas.waitForCondition("policy-unfinalized", "Synced", "False", "WriteNotKept"),
    ]);
    expect(ready.metadata?.labels?.["policy.test/team"]).toBe("storage");
    expect(conditionOf(stripped, "Synced")?.message).toContain(
      "its answer does not show annotation aidc.io/create-pending as written",
    );
    expect(conditionOf(unfinalized, "Synced")?.message).toContain(
      "does not show finalizer aidc.io/nasvolume as written",
    );
    // The settled object's polls (500 ms here) read and write nothing: no echo loop.
    await sleep(1_000);
    const settled = (await nas.get("policy-stamped"))?.metadata?.resourceVersion;
    await sleep(4_000);
    expect((await nas.get("policy-stamped"))?.metadata?.resourceVersion).toBe(settled);
    expect(await subscribes("policy-stamped")).toBe(1);
    expect(await subscribes("policy-stripped")).toBe(0);
    expect(await subscribes("policy-unfinalized")).toBe(0);
    await remove();
    await nas.waitForCondition("policy-stripped", "Ready", "True");
    await nas.waitForCondition("policy-unfinalized", "Ready", "True");
    expect(await subscribes("policy-stripped")).toBe(1);
    expect(await subscribes("policy-unfinalized")).toBe(1);
  }, 60_000);

  it("names a webhook that reverts a late-initialized field WriteNotKept, not a LateInitialized Event for a field not filled", async () => {
    hook.handler = (req) =>
      labelOf(req) === "reverted" &&
      req.operation === "UPDATE" &&
      mountPathOf(req.object) !== undefined &&
      mountPathOf(req.oldObject) === undefined
        ? { allowed: true, patch: [{ op: "remove", path: "/spec/mountPath" }] }
        : { allowed: true };
    await withWebhook(
      "mutating",
      { name: "revert-spec.admission.test", resources: ["nasvolumes"] },
      async () => {
        await labelled("reverted", "reverted");
        const held = await nas.waitForCondition("reverted", "Synced", "False", "WriteNotKept");
        expect(conditionOf(held, "Synced")?.message).toContain(
          "its answer does not show spec.mountPath as written",
        );
        const tries = () => hook.writesOf("reverted").filter((w) => w === "UPDATE").length;
        const atHold = tries();
        // Held retries (1-2 s here) write it again, not each poll (500 ms here), no echo loop.
        await sleep(4_000);
        expect(tries() - atHold).toBeLessThanOrEqual(4);
        expect(await nas.eventNotes("reverted", "LateInitialized")).toEqual([]);
        expect(await subscribes("reverted")).toBe(1);
      },
    );
  }, 60_000);

  it("creates a FileSystem once when a webhook strips its id: the marker it replaced is written back", async () => {
    hook.handler = (req) => {
      const id = req.object?.metadata?.annotations?.[ANNOTATIONS.externalId];
      if (labelOf(req) !== "no-id" || req.operation !== "UPDATE" || id === undefined) {
        return { allowed: true };
      }
      return {
        allowed: true,
        patch: [{ op: "remove", path: "/metadata/annotations/aidc.io~1external-id" }],
      };
    };
    await withWebhook(
      "mutating",
      { name: "strip-id.admission.test", resources: ["filesystems"] },
      async () => {
        await labelled("no-id", "no-id", { sizeGB: 10, mounts: [] }, fileSystemCrd);
        const fs = new ObjectsOf(op.kube, fileSystemCrd, namespace);
        const held = await fs.waitForCondition("no-id", "Synced", "False", "WriteNotKept");
        expect(conditionOf(held, "Synced")?.message).toContain("aidc.io/external-id");
        // The held retries (1-2 s here) find the marker back, and look the resource up by
        // its token instead of creating another.
        await sleep(5_000);
        expect(await fsCreates("no-id")).toBe(1);
        const kept = await fs.get("no-id");
        expect(kept?.metadata?.annotations?.[ANNOTATIONS.createPending]).toBeTruthy();
      },
    );
  }, 60_000);

  it("creates a FileSystem once when a webhook strips its id and then the marker's write-back: written back until kept", async () => {
    let strips = 0;
    hook.handler = (req) => {
      if (labelOf(req) !== "no-id-twice" || req.operation !== "UPDATE" || strips >= 2) {
        return { allowed: true };
      }
      const now = req.object?.metadata?.annotations ?? {};
      const before = req.oldObject?.metadata?.annotations ?? {};
      const added = [ANNOTATIONS.externalId, ANNOTATIONS.createPending].filter(
        (k) => k in now && now[k] !== before[k],
      );
      // The id's write first, then the next write of a record: the marker put back.
      if (added.length === 0 || (strips === 0 && !added.includes(ANNOTATIONS.externalId))) {
        return { allowed: true };
      }
      strips++;
      const patch = added.map((k) => ({
        op: "remove",
        path: `/metadata/annotations/${k.replace("/", "~1")}`,
      }));
      return { allowed: true, patch };
    };
    await withWebhook(
      "mutating",
      { name: "strip-id-twice.admission.test", resources: ["filesystems"] },
      async () => {
        await labelled("no-id-twice", "no-id-twice", { sizeGB: 10, mounts: [] }, fileSystemCrd);
        const fs = new ObjectsOf(op.kube, fileSystemCrd, namespace);
        await fs.waitForCondition("no-id-twice", "Ready", "True");
        expect(strips).toBe(2);
        expect(await fsCreates("no-id-twice")).toBe(1);
      },
    );
  }, 60_000);

  it("orders nothing while a webhook or a policy refuses its finalizer or marker; names them; recovers when they go", async () => {
    hook.handler = (req) =>
      labelOf(req) === "no-finalizer" &&
      finalizersOf(req.object).length > finalizersOf(req.oldObject).length
        ? { allowed: false, message: "finalizers are not allowed here" }
        : { allowed: true };
    const removeHook = await registerWebhook(
      op.kube,
      "validating",
      hook,
      { name: "no-finalizer.admission.test", namespace, resources: ["nasvolumes"] },
      probe,
    );
    leftovers.push(removeHook);
    const scoped = (scenario: string, allowed: string) =>
      `!has(object.metadata.labels) || object.metadata.labels[?'scenario'].orValue('') != '${scenario}' || ${allowed}`;
    const removePolicy = await registerPolicy(
      op.kube,
      { name: "no-marker.admission.test", namespace, resources: ["nasvolumes"] },
      [
        {
          expression: scoped(
            "no-marker",
            `!has(object.metadata.annotations) || !('${ANNOTATIONS.createPending}' in object.metadata.annotations)`,
          ),
          message: "no create-pending here",
        },
      ],
      probe,
    );
    leftovers.push(removePolicy);
    await labelled("no-finalizer", "no-finalizer");
    await labelled("no-marker", "no-marker");
    const [refused, denied] = await Promise.all([
      nas.waitForCondition("no-finalizer", "Synced", "False", "AdmissionDenied"),
      nas.waitForCondition("no-marker", "Synced", "False", "AdmissionDenied"),
    ]);
    expect(conditionOf(refused, "Synced")?.message).toContain(
      'admission webhook "no-finalizer.admission.test" denied the request: finalizers are not allowed here',
    );
    expect(conditionOf(denied, "Synced")?.message).toContain(
      "ValidatingAdmissionPolicy 'no-marker.admission.test' with binding 'no-marker.admission.test' denied request: no create-pending here",
    );
    expect(await nas.eventNotes("no-finalizer", "AdmissionDenied")).not.toEqual([]);
    expect(await nas.eventNotes("no-marker", "AdmissionDenied")).not.toEqual([]);
    await sleep(3_000);
    expect(await subscribes("no-finalizer")).toBe(0);
    expect(await subscribes("no-marker")).toBe(0);
    // Retried with backoff (100 ms doubling to 2 s here), not in a hot loop.
    const tries = hook.writesOf("no-finalizer").filter((w) => w === "UPDATE").length;
    expect(tries).toBeLessThan(12);
    await removeHook();
    await removePolicy();
    await nas.waitForCondition("no-finalizer", "Ready", "True");
    await nas.waitForCondition("no-marker", "Ready", "True");
    expect(await subscribes("no-finalizer")).toBe(1);
    expect(await subscribes("no-marker")).toBe(1);
  }, 60_000);

  it("names a policy that refuses the ConfigMap of spec.exportTo, and exports once it goes", async () => {
    const remove = await registerPolicy(
      op.kube,
      {
        name: "team-label.admission.test",
        namespace,
        resources: [],
        coreResources: ["configmaps"],
      },
      [
        {
          expression: `request.resource.resource != 'configmaps' || (has(object.metadata.labels) && 'team' in object.metadata.labels)`,
          message: "a ConfigMap needs a team label",
        },
      ],
      probe,
    );
    leftovers.push(remove);
    await nas.create("exported", { ...SPEC, exportTo: { configMapName: "exported-nas" } });
    // The NAS is ordered and Ready; only its export waits.
    const refused = await nas.waitFor(
      "exported",
      (o) =>
        conditionOf(o, "Ready")?.status === "True" && conditionOf(o, "Synced")?.status === "False",
    );
    expect(conditionOf(refused, "Synced")?.message).toContain(
      "ValidatingAdmissionPolicy 'team-label.admission.test' with binding 'team-label.admission.test' denied request: a ConfigMap needs a team label",
    );
    // Its retries (2 s apart here) keep Synced=False: no True between them.
    const since = conditionOf(refused, "Synced")?.lastTransitionTime;
    await sleep(5_000);
    expect(conditionOf(await nas.get("exported"), "Synced")).toMatchObject({
      status: "False",
      lastTransitionTime: since,
    });
    await remove();
    await nas.waitForCondition("exported", "Synced", "True");
    const cm = await op.kube.get(CONFIG_MAPS, { namespace, name: "exported-nas" });
    expect(cm?.metadata?.labels?.[EXPORTED_LABEL]).toBe("nasvolume");
    expect(await subscribes("exported")).toBe(1);
  }, 60_000);

  it("names a webhook that is down (failurePolicy Fail) and recovers when it is back", async () => {
    const dead = `https://127.0.0.1:${await freePort()}/`;
    await withWebhook(
      "validating",
      {
        name: "down.admission.test",
        resources: ["nasvolumes"],
        operations: ["UPDATE"],
        objectLabels: { scenario: "down" },
        url: dead,
      },
      async () => {
        await labelled("down", "down");
        const failed = await nas.waitForCondition("down", "Synced", "False");
        expect(conditionOf(failed, "Synced")?.message).toMatch(
          /500 Internal error occurred: failed calling webhook "down.admission.test": .*connection refused/,
        );
        expect(await subscribes("down")).toBe(0);
      },
    );
    await nas.waitForCondition("down", "Ready", "True");
    expect(await subscribes("down")).toBe(1);
  }, 60_000);

  it("orders once while a slow webhook fails its status writes, names it, and writes the status when it is gone", async () => {
    hook.handler = async (req) => {
      if (labelOf(req) === "slow-status") await sleep(2_000);
      return { allowed: true };
    };
    await withWebhook(
      "validating",
      {
        name: "slow.admission.test",
        resources: ["nasvolumes/status"],
        operations: ["UPDATE"],
        objectLabels: { scenario: "slow-status" },
        timeoutSeconds: 1,
      },
      async () => {
        await labelled("slow-status", "slow-status");
        // The create's records are annotations: the order goes, its status cannot.
        await eventually(async () =>
          (await nas.eventNotes("slow-status", "InternalError")).some((n) =>
            /failed calling webhook "slow.admission.test": .*context deadline exceeded/.test(n),
          ),
        );
        const obj = await nas.waitFor("slow-status", (o) =>
          Boolean(o.metadata?.annotations?.[ANNOTATIONS.externalId]),
        );
        expect(conditionOf(obj, "Synced")).toBeUndefined();
        await sleep(2_000);
        expect(await subscribes("slow-status")).toBe(1);
      },
    );
    await nas.waitForCondition("slow-status", "Ready", "True");
    expect(await subscribes("slow-status")).toBe(1);
  }, 60_000);

  it("deletes the remote resource once while a webhook refuses the finalizer's removal, and lets the object go after", async () => {
    hook.handler = (req) =>
      labelOf(req) === "kept" &&
      finalizersOf(req.object).length < finalizersOf(req.oldObject).length
        ? { allowed: false, message: "finalizers stay" }
        : { allowed: true };
    const deletes = async () => (await op.admin.requests({ endpoint: "deleteNas" })).length;
    const before = await deletes();
    await withWebhook(
      "validating",
      { name: "keep-finalizer.admission.test", resources: ["nasvolumes"] },
      async () => {
        await labelled("kept", "kept", { ...SPEC, deletionPolicy: "Delete" });
        await nas.waitForCondition("kept", "Ready", "True");
        await nas.delete("kept");
        await eventually(async () =>
          (await nas.eventNotes("kept", "AdmissionDenied")).some((n) =>
            n.includes("finalizers stay"),
          ),
        );
        await sleep(3_000);
        expect(await deletes()).toBe(before + 1);
      },
    );
    await nas.waitForGone("kept");
    expect(await deletes()).toBe(before + 1);
    // Said once, when the finalizer went, not at each refused try.
    await op.manager.events.flush();
    expect(await nas.eventCount("kept", "Deleted")).toBe(1);
  }, 60_000);
});
