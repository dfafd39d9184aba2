import { describe, expect, it } from "vitest";
import { cciInstanceSchema, saveCciImageResultSchema } from "./cci.js";
import { pageOf } from "./data.js";
import { nasInstanceSchema, nasProductSchema } from "./nas.js";
import { podOpenPortsSchema, trainingPodSchema } from "./pods.js";
import { trainingTaskSchema } from "./training.js";

describe("parsing the service's resources", () => {
  it("reads the framework under either spelling as trainingFramework, canonical case", () => {
    expect(
      trainingTaskSchema.parse({ id: "t", trainingFramwork: "pytorch" }).trainingFramework,
    ).toBe("PyTorch");
    expect(trainingTaskSchema.parse({ id: "t", trainingFramework: "MPI" }).trainingFramework).toBe(
      "MPI",
    );
  });

  it("keeps an enum value it does not know (the service's lists are open)", () => {
    expect(trainingTaskSchema.parse({ id: "t", trainingType: "FINE_TUNING" }).trainingType).toBe(
      "FINE_TUNING",
    );
  });

  it("drops the Java 'empty' artefact from maps and reads numbers given as text", () => {
    const t = trainingTaskSchema.parse({
      id: "t",
      env: { A: "1", B: 2, empty: false },
      priority: "2",
      resource: { workerCount: "4", cpuCores: 8, empty: false },
    });
    expect(t.env).toEqual({ A: "1", B: "2" });
    expect(t.priority).toBe(2);
    expect(t.resource).toMatchObject({ workerCount: 4, cpuCores: "8" });
  });

  it("normalises both timestamp formats to RFC 3339", () => {
    const t = trainingTaskSchema.parse({
      id: "t",
      createdTime: "2025-01-02 03:04:05",
      startTime: "2025-01-02T03:04:06.789Z",
      lastUpdateTime: "",
      execInfos: [{ status: "RUNNING", createTime: "2025-01-02 03:04:07" }],
    });
    expect(t).toMatchObject({
      createdTime: "2025-01-02T03:04:05Z",
      startTime: "2025-01-02T03:04:06Z",
    });
    expect(t.lastUpdateTime).toBeUndefined();
    expect(t.execInfos?.[0]?.createTime).toBe("2025-01-02T03:04:07Z");
  });

  it("treats null as absent", () => {
    const n = nasInstanceSchema.parse({
      id: "n",
      quota: null,
      releaseTime: null,
      sharePolicy: null,
    });
    expect(n.quota).toBeUndefined();
    expect(n.sharePolicy).toBeUndefined();
  });

  it.each([
    ["RUNNING", "Running"],
    ["running", "Running"],
    ["CREATING", "Creating"],
    ["Running", "Running"],
    ["RELEASING", "RELEASING"],
  ])("reads the NAS status %s as %s (the spec's spelling of the words it names)", (sent, read) => {
    expect(nasInstanceSchema.parse({ id: "n", status: sent }).status).toBe(read);
  });

  it("reads the integer price unit of the task detail schema as text", () => {
    expect(nasInstanceSchema.parse({ id: "n", priceUnit: 2 }).priceUnit).toBe("2");
  });

  it("requires an id where the resource would be useless without one", () => {
    expect(nasInstanceSchema.safeParse({ name: "x" }).success).toBe(false);
    expect(cciInstanceSchema.safeParse({ name: "x" }).success).toBe(false);
  });

  it("reads empty NAS product bounds as no bound", () => {
    const p = nasProductSchema.parse({
      name: "p",
      paramValueMin: "",
      paramValueMax: null,
      paramValue: 100,
    });
    expect(p).toMatchObject({ paramValue: "100" });
    expect(p.paramValueMin).toBeUndefined();
    expect(p.paramValueMax).toBeUndefined();
  });

  it("reads the save-image answer's image_id", () => {
    expect(saveCciImageResultSchema.parse({ image_id: "img-1" })).toEqual({ imageId: "img-1" });
    expect(saveCciImageResultSchema.safeParse({}).success).toBe(false);
  });

  it("reads a pod list item by podName or name, or as a bare name", () => {
    expect(trainingPodSchema.parse({ name: "p-0" }).podName).toBe("p-0");
    expect(trainingPodSchema.parse("p-1").podName).toBe("p-1");
  });

  it("reads open ports with system ports lacking a protocol and missing lists as empty", () => {
    const p = podOpenPortsSchema.parse({
      ports: [{ port: 22, externalHost: "h", externalPort: "30001" }],
    });
    expect(p.ports[0]).toMatchObject({ port: 22, externalPort: 30001 });
    expect(p.ports[0]?.protocol).toBeUndefined();
    expect(p.customPorts).toEqual([]);
  });
});

describe("paged lists", () => {
  const page = pageOf(nasInstanceSchema);

  it("reads the documented page shape", () => {
    expect(
      page.parse({ records: [{ id: "a" }], pageNo: 1, pageSize: 10, totalRows: 1 }),
    ).toMatchObject({
      records: [{ id: "a" }],
      totalRows: 1,
    });
  });

  it("reads a bare array and the list/total variant", () => {
    expect(page.parse([{ id: "a" }, { id: "b" }]).totalRows).toBe(2);
    expect(page.parse({ list: [{ id: "a" }], total: "7" })).toMatchObject({
      records: [{ id: "a" }],
      totalRows: 7,
    });
  });

  it("reads an empty page answered as null or {} as no records", () => {
    expect(page.parse(null).records).toEqual([]);
    expect(page.parse({}).records).toEqual([]);
    expect(page.safeParse("none").success).toBe(false);
  });

  it("names the failing record of a page", () => {
    const r = page.safeParse({ records: [{ id: "a" }, { name: "no id" }] });
    expect(r.success).toBe(false);
    expect(r.error?.issues[0]?.path).toEqual(["records", 1, "id"]);
  });
});
