import { describe, expect, it } from "vitest";
import {
  connectionLabelValue,
  gpuModelOf,
  labelValue,
  productListCommand,
  productObjectName,
} from "./naming.js";

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const LABEL_VALUE = /^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?$/;

describe("catalog object names", () => {
  it("read as the connection and the code, and end in a hash", () => {
    expect(productObjectName(undefined, "train.gpu.a100.1", 1)).toMatch(
      /^default-train-gpu-a100-1-[0-9a-f]{10}$/,
    );
    expect(productObjectName("team-a", "train.cpu.16", 1)).toMatch(
      /^team-a-train-cpu-16-[0-9a-f]{10}$/,
    );
  });

  it("are the same for the same product, every time", () => {
    expect(productObjectName("team-a", "X.1", 2)).toBe(productObjectName("team-a", "X.1", 2));
  });

  it("differ for codes that sanitize alike, for another connection and another compute center", () => {
    const names = [
      productObjectName(undefined, "train.gpu", 1),
      productObjectName(undefined, "train-gpu", 1),
      productObjectName(undefined, "TRAIN.GPU", 1),
      productObjectName(undefined, "train.gpu", 2),
      productObjectName("default", "train.gpu", 1),
    ];
    expect(new Set(names).size).toBe(names.length);
  });

  it("are DNS labels of at most 63 characters, whatever the code", () => {
    for (const code of ["a".repeat(300), "日本語", "--..--", "", "Ünïcödé/é?x=1"]) {
      const name = productObjectName("c".repeat(253), code, undefined);
      expect(name.length, code).toBeLessThanOrEqual(63);
      expect(name, code).toMatch(DNS_LABEL);
    }
  });
});

describe("catalog label values", () => {
  it("keep a GPU model readable and valid", () => {
    expect(labelValue("NVIDIA A100 80GB")).toBe("NVIDIA-A100-80GB");
    expect(labelValue("  H100 (SXM) ")).toBe("H100-SXM");
    expect(labelValue(undefined)).toBe("none");
    expect(labelValue("///")).toBe("none");
  });

  it("shorten a long value with a hash, still valid and distinct", () => {
    const a = labelValue(`${"x".repeat(70)}a`);
    const b = labelValue(`${"x".repeat(70)}b`);
    expect(a).not.toBe(b);
    for (const v of [a, b]) {
      expect(v.length).toBeLessThanOrEqual(63);
      expect(v).toMatch(LABEL_VALUE);
    }
  });

  it("name the default connection by a value no ServiceConnection can have", () => {
    expect(connectionLabelValue(undefined)).toBe("default_connection");
    expect(connectionLabelValue("default")).toBe("default");
    const long = connectionLabelValue(`team.${"a".repeat(100)}`);
    expect(long).toMatch(LABEL_VALUE);
    expect(long).toContain("_");
  });

  it("give the command that lists one connection's products, by the label they carry", () => {
    expect(productListCommand("trainingproducts", "team-a")).toBe(
      "kubectl get trainingproducts -l aidc.io/connection=team-a",
    );
    expect(productListCommand("nasproducts", undefined, { "aidc.io/compute-center": 2 })).toBe(
      "kubectl get nasproducts -l aidc.io/connection=default_connection,aidc.io/compute-center=2",
    );
    const long = `team.${"a".repeat(100)}`;
    expect(productListCommand("nasproducts", long, { "aidc.io/compute-center": undefined })).toBe(
      `kubectl get nasproducts -l aidc.io/connection=${connectionLabelValue(long)}`,
    );
  });

  it("read the service's dash or nothing as no GPU", () => {
    expect(gpuModelOf("-")).toBeUndefined();
    expect(gpuModelOf(undefined)).toBeUndefined();
    expect(gpuModelOf(" A100 ")).toBe("A100");
  });
});
