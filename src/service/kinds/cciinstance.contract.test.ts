/**
 * Contract: the CCI instance operations (kinds/cciinstance.ts), client against the
 * emulator: list and filters, detail, error details and save-image.
 */
import { describe, expect, it } from "vitest";
import { emulatorPerFile, failure } from "../../../test/support/service-contract.js";
import type { EmulatedService } from "../../emulator/harness.js";
import type { ServiceClient } from "../client.js";
import { DEFAULT_ENDPOINTS } from "../endpoints.js";
import { ServiceNotFoundError } from "../errors.js";

let svc: EmulatedService;
let client: ServiceClient;
const DELAY = 500;

emulatorPerFile({ manualTime: true, emulator: { subscriptionDelayMs: DELAY } }, (started) => {
  svc = started;
  client = svc.newClient({ endpoints: { deleteNas: DEFAULT_ENDPOINTS.deleteNas.path } });
});

describe("CCI instances", () => {
  it("lists the fixture instances page by page and filters by status and name", async () => {
    const page = await client.listCci({ pageNo: 1, pageSize: 2 });
    expect(page).toMatchObject({ pageNo: 1, pageSize: 2, totalRows: 4 });
    const all: string[] = [];
    for await (const c of client.iterateCci({ pageSize: 3 })) all.push(c.id);
    expect(all).toEqual(["cci-0001", "cci-0002", "cci-0003", "cci-0004"]);
    expect((await client.listCci({ status: "STOPPED" })).records.map((c) => c.id)).toEqual([
      "cci-0002",
    ]);
    expect((await client.listCci({ name: "ALICE" })).records.map((c) => c.id)).toEqual([
      "cci-0001",
    ]);
  });

  it("shows the detail with times in RFC 3339 and the detail-only fields", async () => {
    const c = await client.getCci("cci-0001");
    expect(c).toMatchObject({
      status: "RUNNING",
      createTime: "2025-01-06T09:00:00Z",
      instanceMor: "vm-cci-0001",
    });
    expect(c.cciResource).toMatchObject({ gpuCount: "1" });
  });

  it("explains a failed instance in its error details", async () => {
    expect(await client.getCciErrorDetails("cci-0003")).toMatchObject({
      instanceStatus: "FAILED",
      instanceSubStatus: "CREATE_VOLUME_FAILED",
      suggestion: expect.stringMatching(/Release the instance/),
    });
  });

  it("saves an image, showing saveImageStatus while the save runs", async () => {
    const { imageId } = await client.saveCciImage("cci-0001", { imageName: "nb", tag: "v1" });
    expect(imageId).toMatch(/^img-/);
    const saving = (await client.listCci({ id: "cci-0001" })).records[0];
    expect(saving?.saveImageStatus).toBe(true);
    expect(
      await failure(client.saveCciImage("cci-0001", { imageName: "nb", tag: "v2" })),
    ).toMatchObject({ code: 409 });
    svc.clock?.advance(60_000);
    expect((await client.listCci({ id: "cci-0001" })).records[0]?.saveImageStatus).toBe(false);
  });

  it("refuses to save an image of a failed instance", async () => {
    const err = await failure(client.saveCciImage("cci-0003", { imageName: "x", tag: "1" }));
    expect((err as Error).message).toMatch(/only a RUNNING or STOPPED instance/);
  });

  it("follows a state change made through the admin API", async () => {
    await svc.admin.setCciState("cci-0001", { status: "STOPPED", subStatus: "STOPPED" });
    expect(await client.getCci("cci-0001")).toMatchObject({
      status: "STOPPED",
      subStatus: "STOPPED",
    });
  });

  it.each([
    ["getCci", (c: ServiceClient) => c.getCci("cci-404")],
    ["getCciErrorDetails", (c: ServiceClient) => c.getCciErrorDetails("cci-404")],
    ["saveCciImage", (c: ServiceClient) => c.saveCciImage("cci-404", { imageName: "i", tag: "t" })],
  ])("%s of an unknown id is not-found", async (_name, call) => {
    expect(await failure(call(client))).toBeInstanceOf(ServiceNotFoundError);
  });
});
