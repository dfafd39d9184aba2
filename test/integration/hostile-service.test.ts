import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ANNOTATIONS } from "../../src/controllers/managed/decisions.js";
import { nasVolumeController } from "../../src/controllers/nasvolume/controller.js";
import { nasVolumeCrd } from "../../src/crds/nasvolume.js";
import { SecretRedactor } from "../../src/runtime/outbound-guards.js";
import { capturedLog } from "../support/captured-log.js";
import { adminKubeConfig, createNamespace } from "../support/kube.js";
import { conditionOf, EVENTS, ObjectsOf } from "../support/managed.js";
import { startTestOperator, TEST_API_KEY, type TestOperator } from "../support/operator.js";

/**
 * A hostile service answer costs one object a condition, never the process, and never
 * the key: odd ids, huge and endless bodies, messages quoting the key, against the
 * NasVolume controller (logging at debug level), the real API server and the emulator,
 * over each of the service's HTTP clients (`service.httpClient`).
 */
describe.each(["node-http", "node-fetch"] as const)(
  "a hostile service answer (%s)",
  (httpClient) => {
    let op: TestOperator;
    let nas: ObjectsOf;
    let namespace = "";
    const redactor = new SecretRedactor();
    const { log, lines } = capturedLog(redactor);

    beforeAll(async () => {
      namespace = await createNamespace(adminKubeConfig(), "hostile");
      op = await startTestOperator({
        controllers: [(deps) => nasVolumeController(deps, { visibilityGraceMs: 1_000 })],
        namespaces: [namespace],
        log,
        redactor,
        service: { httpClient },
      });
      nas = new ObjectsOf(op.kube, nasVolumeCrd, namespace);
    }, 60_000);

    afterAll(async () => {
      await op?.stop();
    });

    it.each([".", ".."])(
      "an external-id annotation %j sends no request and holds the object with InvalidRemoteId",
      async (id) => {
        const name = id === "." ? "dot" : "dotdot";
        await nas.create(
          name,
          { productCode: "nas.capacity.standard" },
          {
            [ANNOTATIONS.externalId]: id,
          },
        );
        const obj = await nas.waitForCondition(name, "Synced", "False", "InvalidRemoteId");
        expect(conditionOf(obj, "Synced")?.message).toContain("is not a well-formed service id");
        // Nothing was read for it, and no request went to a path the emulator cannot route
        // (a client resolving "/instance/../detail" would send "/instance/detail").
        const requests = await op.admin.requests({});
        expect(requests.filter((r) => r.endpoint === "getNas")).toEqual([]);
        expect(requests.filter((r) => r.endpoint === undefined)).toEqual([]);
      },
    );

    it.each([
      { kind: "oversized" as const, name: "huge" },
      { kind: "endless" as const, name: "endless" },
    ])(
      "a $kind body on a detail read is cut off: MalformedServiceAnswer, and the process goes on",
      async ({ kind, name }) => {
        await nas.create(name, { productCode: "nas.capacity.standard" });
        await nas.waitForCondition(name, "Ready", "True");
        const before = process.memoryUsage().rss;
        await op.admin.setFaults([{ kind, endpoint: "getNas" }]);
        try {
          // A settled object's poll reads the NAS list; a spec change makes it read the detail.
          await nas.patchSpec(name, { mountPath: "/data/look_again" });
          const obj = await nas.waitForCondition(name, "Synced", "False", "MalformedServiceAnswer");
          expect(conditionOf(obj, "Synced")?.message).toContain("longer than the limit");
          // The operator runs in this process: a few cut-off bodies of 4 MiB, not 30 MB or
          // an endless stream, held at once.
          expect(process.memoryUsage().rss - before).toBeLessThan(200 * 1024 * 1024);
        } finally {
          await op.admin.clearFaults();
        }
        await nas.waitForCondition(name, "Synced", "True");
      },
    );

    describe("quoting the key", () => {
      const noKeyAnywhere = async (name: string) => {
        const obj = await nas.get(name);
        expect(JSON.stringify(obj)).not.toContain(TEST_API_KEY);
        const { items } = await op.kube.list(EVENTS, namespace);
        const about = items.filter((e) => JSON.stringify(e.regarding).includes(`"${name}"`));
        expect(about.length).toBeGreaterThan(0);
        expect(JSON.stringify(about)).not.toContain(TEST_API_KEY);
        expect(lines.filter((l) => l.includes(TEST_API_KEY))).toEqual([]);
      };

      it("an error message echoing the key lands in no condition, Event or log line", async () => {
        await nas.create("echo", { productCode: "nas.capacity.standard" });
        await nas.waitForCondition("echo", "Ready", "True");
        await op.admin.setFaults([
          { kind: "error", endpoint: "getNas", status: 400, message: "bad key", echoKey: true },
        ]);
        try {
          // A settled object's poll reads the NAS list; a spec change makes it read the detail.
          await nas.patchSpec("echo", { mountPath: "/data/look_again" });
          const obj = await nas.waitFor("echo", (o) =>
            (conditionOf(o, "Synced")?.message ?? "").includes("bad key"),
          );
          expect(conditionOf(obj, "Synced")?.message).toContain("carried key [REDACTED]");
          await nas.waitForEvents("echo", [conditionOf(obj, "Synced")?.reason ?? ""]);
        } finally {
          await op.admin.clearFaults();
        }
        // The debug lines of the service client saw the echo, redacted.
        expect(lines.some((l) => l.includes("carried key [REDACTED]"))).toBe(true);
        await noKeyAnywhere("echo");
      });

      it("a failed subscription whose message quotes the key lands in no condition, Event or log line", async () => {
        await op.admin.configure({ subscriptionDelayMs: 60_000 });
        try {
          await nas.create("failing", { productCode: "nas.capacity.standard" });
          const pending = await nas.waitFor(
            "failing",
            (o) => o.metadata?.annotations?.[ANNOTATIONS.subscriptionKey] !== undefined,
          );
          const key = pending.metadata?.annotations?.[ANNOTATIONS.subscriptionKey] as string;
          await op.admin.resolveSubscription(
            key,
            "Failed",
            `quota of key ${TEST_API_KEY} exceeded`,
          );
          const obj = await nas.waitFor("failing", (o) =>
            JSON.stringify(o.status ?? {}).includes("exceeded"),
          );
          expect(JSON.stringify(obj.status)).toContain("quota of key [REDACTED] exceeded");
          await nas.waitForEvents("failing", ["CreateFailed"]);
        } finally {
          await op.admin.configure({ subscriptionDelayMs: 300 });
        }
        await noKeyAnywhere("failing");
      });
    });
  },
);
