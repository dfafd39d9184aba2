import { describe, expect, it } from "vitest";
import {
  scaleNasBodySchema,
  toSubscribeNasBody,
  updateNasMountPathBodySchema,
} from "../kinds/nasvolume.js";
import {
  createTrainingTaskBodySchema,
  toCreateTrainingTaskBody,
} from "../kinds/trainingjob.create.js";
import { toTemplateBody } from "../kinds/trainingtemplate.js";

const task = {
  name: "t",
  createType: "DIRECT" as const,
  productCode: "p",
  workerCount: 1,
  image: "i",
};

describe("the task create body on the wire", () => {
  it("spells the framework field trainingFramwork, in the case of the create field list", () => {
    const body = toCreateTrainingTaskBody({
      ...task,
      trainingFramework: "PyTorch",
      trainingType: "PRE_TRAINING",
    });
    expect(body.trainingFramwork).toBe("pytorch");
    expect(body.trainingType).toBe("pre_training");
    expect(body).not.toHaveProperty("trainingFramework");
  });

  it("canonicalises enum values given in any letter case", () => {
    const body = toCreateTrainingTaskBody({
      ...task,
      createType: "template" as "TEMPLATE",
      imageType: "GENERAL",
      trainingFramework: "deepSpeed",
    });
    expect(body).toMatchObject({
      createType: "TEMPLATE",
      imageType: "general",
      trainingFramwork: "deepspeed",
    });
  });

  it("leaves absent optional fields out", () => {
    expect(Object.keys(toCreateTrainingTaskBody(task)).sort()).toEqual([
      "createType",
      "image",
      "name",
      "productCode",
      "workerCount",
    ]);
  });

  it.each([
    ["a priority above 3", { priority: 4 }, /priority/],
    ["a priority below 1", { priority: 0 }, /priority/],
    ["no image", { image: "" }, /image/],
    ["zero workers", { workerCount: 0 }, /workerCount/],
    ["an unknown framework", { trainingFramwork: "jax" }, /jax/],
  ])("is refused with %s", (_reason, change, message) => {
    const r = createTrainingTaskBodySchema.safeParse({
      ...toCreateTrainingTaskBody(task),
      ...change,
    });
    expect(r.success).toBe(false);
    expect(JSON.stringify(r.error?.issues)).toMatch(message);
  });

  it("is accepted by the service with either framework spelling and any case", () => {
    const r1 = createTrainingTaskBodySchema.parse({
      ...task,
      trainingFramework: "TENSORFLOW",
      trainingType: "hpc",
    });
    expect(r1).toMatchObject({ trainingFramework: "TensorFlow", trainingType: "HPC" });
    const r2 = createTrainingTaskBodySchema.parse({ ...task, trainingFramwork: "mpi" });
    expect(r2.trainingFramwork).toBe("MPI");
  });
});

describe("the template body on the wire", () => {
  it("uses the template table's case and the service's spelling", () => {
    expect(
      toTemplateBody({ trainingFramework: "pytorch", trainingType: "pre_training", priority: 2 }),
    ).toEqual({
      trainingFramwork: "PyTorch",
      trainingType: "PRE_TRAINING",
      priority: 2,
    });
  });
});

describe("NAS bodies on the wire", () => {
  it("writes storageCapacity as a string", () => {
    const body = toSubscribeNasBody({
      productCode: "p",
      storageParams: { storageCapacity: 500, name: "d" },
    });
    expect(body.storageParams?.storageCapacity).toBe("500");
  });

  it("takes the scale capacity as a positive change", () => {
    expect(
      scaleNasBodySchema.safeParse({ id: "n", scaleType: "ScaleUp", capacity: 0 }).success,
    ).toBe(false);
    expect(scaleNasBodySchema.safeParse({ id: "n", scaleType: "Grow", capacity: 5 }).success).toBe(
      false,
    );
    expect(
      scaleNasBodySchema.parse({ id: "n", scaleType: "scaledown", capacity: 5 }).scaleType,
    ).toBe("ScaleDown");
  });

  it.each([
    ["/data", true],
    ["data_1/x", true],
    ["/", false],
    ["/mnt/my-data", false],
    [`/${"a".repeat(64)}`, false],
  ])("checks mountPath %j against the spec's pattern", (mountPath, ok) => {
    expect(updateNasMountPathBodySchema.safeParse({ mountPath }).success).toBe(ok);
  });
});
