/**
 * Ids enter through service answers and through the objects (annotations, spec): an id
 * such as `..` is refused at either door, and never becomes a request to another path.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { SERVICE_ID_PATTERN as CRD_SERVICE_ID_PATTERN } from "../crds/fields.js";
import { type EmulatedService, startEmulatedService } from "../emulator/harness.js";
import type { ServiceClient } from "./client.js";
import { type ServiceError, ServiceInvalidIdError, ServiceInvalidRequestError } from "./errors.js";
import { subscriptionResultSchema } from "./schemas/create.js";
import { pageOf } from "./schemas/data.js";
import { nasInstanceSchema } from "./schemas/nas.js";
import { trainingPodSchema } from "./schemas/pods.js";
import { isServiceId, renderPath, SERVICE_ID_PATTERN } from "./schemas/primitives.js";
import { trainingTaskSchema } from "./schemas/training.js";

describe("isServiceId", () => {
  it.each(["nas-000001", "3f2a9c1e-0b7d-4c8e-9a51-2d6f0e4b7a13", "12345", "_x", "a.b:c"])(
    "accepts %j",
    (id) => expect(isServiceId(id)).toBe(true),
  );
  it.each([".", "..", ".hidden", "a/b", "a b", "", "a%2F", "a\n"])("refuses %j", (id) =>
    expect(isServiceId(id)).toBe(false),
  );
});

describe("renderPath", () => {
  it("has its parameters filled with encoded ids", () => {
    expect(
      renderPath("getPodResource", "/v1/training/instance/{id}/{podName}/resource", {
        id: "task-1",
        podName: "task-1:worker.0",
      }),
    ).toBe("/v1/training/instance/task-1/task-1%3Aworker.0/resource");
  });

  it.each([".", "..", "a/b", "../detail", "p 1", "%2e%2e", "a?b", "a#b", "-rf", "x".repeat(129)])(
    "refuses the id %j, which is not well-formed, so that no request goes to another path",
    (id) => {
      expect(() => renderPath("getTask", "/v1/training/instance/{id}/detail", { id })).toThrow(
        ServiceInvalidIdError,
      );
    },
  );

  it.each<Record<string, string>>([{}, { id: "" }])(
    "refuses the parameters %j instead of collapsing the path",
    (params) => {
      const render = () => renderPath("getX", "/v1/x/{id}/detail", params);
      expect(render).toThrow(ServiceInvalidRequestError);
      expect(render).toThrow(/^invalid getX request: missing value for path parameter \{id\}/);
    },
  );
});

describe("the id rule", () => {
  it("is the same in the CRDs (apply-time) and in the client", () => {
    expect(CRD_SERVICE_ID_PATTERN.source).toBe(SERVICE_ID_PATTERN.source);
  });
});

describe("ids in service answers", () => {
  it.each([
    { what: "a NAS detail", schema: nasInstanceSchema, data: { id: ".." } },
    {
      what: "a task in a list page",
      schema: pageOf(trainingTaskSchema),
      data: { records: [{ id: "." }] },
    },
    { what: "a pod name", schema: trainingPodSchema, data: { podName: "../x" } },
    {
      what: "a subscription's instance",
      schema: subscriptionResultSchema("k"),
      data: { state: "Succeeded", instanceId: ".." },
    },
  ])(
    "$what with an id that is not well-formed is malformed, naming the field",
    ({ schema, data }) => {
      const parsed = schema.safeParse(data);
      expect(parsed.success).toBe(false);
      expect(JSON.stringify(parsed.error?.issues)).toContain("expected a service id");
    },
  );
});

describe("ids sent by the client", () => {
  let svc: EmulatedService;
  let client: ServiceClient;
  beforeAll(async () => {
    svc = await startEmulatedService();
    client = svc.newClient();
  });
  afterAll(() => svc.stop());
  beforeEach(() => svc.emulator.requestLog.clear());

  it.each([".", "..", "../../v1/training/detail"])(
    "the id %j sends nothing and fails with InvalidRemoteId",
    async (id) => {
      const calls = [
        client.getNas(id),
        client.getTrainingTask(id),
        client.getCci(id),
        client.listPodOpenPorts("task-1", id),
        client.getNasSubscriptionResult(id),
      ];
      for (const call of calls) {
        const err = await call.then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(err).toBeInstanceOf(ServiceInvalidIdError);
        expect((err as ServiceError & { reason: string }).reason).toBe("InvalidRemoteId");
        expect((err as Error).message).toContain("is not a well-formed service id");
        expect((err as ServiceError).retryable).toBe(false);
      }
      expect(svc.emulator.requestLog.read()).toEqual([]);
    },
  );
});
