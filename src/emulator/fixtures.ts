/**
 * The emulator's seeded catalogs and CCI instances: what a fresh (or reset) emulator
 * holds. Enough variety to exercise every rule: GPU and CPU specifications, one sold
 * out; NAS products with both bounds, with only a minimum, with no bounds (only the
 * default capacity), and one that cannot be provisioned; CCI instances in RUNNING,
 * STOPPED, ERROR and PENDING.
 */
import type { CciRecord, NasProductRecord, TrainingProductRecord } from "./records.js";

/** Compute centers: id → code (for nas-storage-available's aidcCode). */
export const AIDC_CODES: Readonly<Record<number, string>> = { 1: "aidc-east-1", 2: "aidc-west-1" };

/** The tenant every emulated resource belongs to. */
export const EMULATOR_TENANT = { id: "tenant-0001", name: "Emulated Tenant" };

/** Training resource specifications. */
export function defaultTrainingProducts(): TrainingProductRecord[] {
  const gpu = (
    code: string,
    name: string,
    gpus: number,
    remaining: number,
  ): TrainingProductRecord => ({
    name,
    aidcId: 1,
    productCode: code,
    cpuCores: String(gpus * 8),
    memoryGB: String(gpus * 64),
    gpuName: "NVIDIA A100 80GB",
    gpuCount: String(gpus),
    diskGB: String(gpus * 200),
    price: (gpus * 12.5).toFixed(2),
    priceUnit: 1,
    remainingCount: remaining,
    ext: {},
  });
  return [
    gpu("train.gpu.a100.1", "A100 x1 (8 vCPU, 64 GB)", 1, 64),
    gpu("train.gpu.a100.8", "A100 x8 (64 vCPU, 512 GB)", 8, 4),
    {
      name: "CPU 16 vCPU, 32 GB",
      aidcId: 1,
      productCode: "train.cpu.16",
      cpuCores: "16",
      memoryGB: "32",
      gpuName: "-",
      gpuCount: "0",
      diskGB: "100",
      price: "1.20",
      priceUnit: 1,
      remainingCount: 500,
      ext: {},
    },
    {
      name: "H100 x1 (sold out)",
      aidcId: 2,
      productCode: "train.gpu.h100.1",
      cpuCores: "16",
      memoryGB: "128",
      gpuName: "NVIDIA H100",
      gpuCount: "1",
      diskGB: "400",
      price: "30.00",
      priceUnit: 1,
      remainingCount: 0,
      ext: { stockError: "no H100 capacity left in aidc-west-1" },
    },
  ];
}

/** NAS storage products. */
export function defaultNasProducts(): NasProductRecord[] {
  const base = {
    resourceTypeCode: "NAS",
    resourceSpecParamCode: "storageCapacity",
    paramUnit: 1,
    priceUnit: 2,
    currencyUnitOfMeasure: 1,
    currencyUnitPriceFormula: "capacity * price",
  };
  return [
    {
      ...base,
      name: "Capacity NAS, 100 to 10240 GB",
      aidcId: 1,
      productCode: "nas.capacity.standard",
      paramValue: "100",
      paramValueMin: 100,
      paramValueMax: 10240,
      price: "0.30",
      available: true,
    },
    {
      ...base,
      name: "Performance NAS, from 500 GB",
      aidcId: 1,
      productCode: "nas.performance",
      paramValue: "500",
      paramValueMin: 500,
      price: "1.10",
      available: true,
    },
    {
      ...base,
      name: "Fixed NAS, 200 GB",
      aidcId: 1,
      productCode: "nas.fixed.200",
      paramValue: "200",
      price: "0.25",
      available: true,
    },
    {
      ...base,
      name: "Capacity NAS (aidc-west-1, not provisionable)",
      aidcId: 2,
      productCode: "nas.capacity.west",
      paramValue: "100",
      paramValueMin: 100,
      paramValueMax: 2048,
      price: "0.30",
      available: false,
    },
  ];
}

function cci(
  id: string,
  name: string,
  status: string,
  subStatus: string,
  extra: Partial<CciRecord> = {},
): CciRecord {
  const running = status === "RUNNING";
  return {
    id,
    fields: {
      id,
      name,
      description: `emulated instance ${name}`,
      orderInstanceId: `order-${id}`,
      status,
      subStatus,
      priority: 3,
      aidcId: 1,
      createTime: "2025-01-06 09:00:00",
      updateTime: "2025-01-06 09:05:00",
      startTime: running ? "2025-01-06 09:01:30" : "",
      stopTime: status === "STOPPED" ? "2025-01-07 18:00:00" : "",
      releaseTime: "",
      autoStopTime: "",
      autoReleaseTime: "",
      autoStopEnable: false,
      autoReleaseEnable: false,
      image: "registry.example.com/ml/pytorch:2.4-cuda12",
      resource: {
        cpuCores: "8",
        memoryGB: "64",
        gpuName: "NVIDIA A100 80GB",
        gpuCount: "1",
        diskGB: "200",
        productName: "A100 x1",
        productCode: "cci.gpu.a100.1",
      },
      env: { JUPYTER_TOKEN_FILE: "/etc/jupyter/token" },
      webSSHUrl: running ? `https://ssh.emulator.local/${id}` : "",
      jupyterUrl: running ? `https://jupyter.emulator.local/${id}` : "",
      vscodeUrl: running ? `https://vscode.emulator.local/${id}` : "",
      tenantId: EMULATOR_TENANT.id,
      tenantName: EMULATOR_TENANT.name,
      createdBy: "user-0001",
      creatorName: "Emulated User",
      jupyterHealth: running,
      vscodeHealth: running,
      storageSize: 200,
      bundle: false,
      instanceMor: `vm-${id}`,
      productId: "prod-cci-a100-1",
      price: "11.00",
      priceUnit: 1,
      chargeMethod: 1,
    },
    savingImageUntil: 0,
    images: [],
    ...extra,
  };
}

/** CCI instances (the API cannot create them; the admin API changes their state). */
export function defaultCciInstances(): CciRecord[] {
  return [
    cci("cci-0001", "notebook-alice", "RUNNING", "RUNNING"),
    cci("cci-0002", "batch-bob", "STOPPED", "STOPPED"),
    cci("cci-0003", "broken-carol", "ERROR", "CREATE_VOLUME_FAILED", {
      errorDetails: {
        instanceStatus: "FAILED",
        instanceSubStatus: "CREATE_VOLUME_FAILED",
        errorDescription: "The system disk volume could not be created.",
        suggestion: "Release the instance and create it again, or contact support.",
        errorDetail: "volume provisioning timed out after 600s in pool ssd-01",
      },
    }),
    cci("cci-0004", "pending-dave", "PENDING", "PENDING"),
  ];
}
