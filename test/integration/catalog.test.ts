/**
 * The product catalogs as cluster-scoped objects, on the real API server against the
 * emulator: the default connection's catalogs and two ServiceConnections' (two emulator
 * accounts with different catalogs) mirrored as TrainingProducts and NasProducts; a
 * product added, changed and removed in the service followed; nothing written while
 * nothing changes; a reconcile-now request, a hand edit, a refused TrainingJob and
 * NasVolume (ordered once their product appears); a refused read's Event saying the
 * mirror's own retry; a deleted connection's products gone.
 */
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { catalogMirrorController } from "../../src/controllers/catalog/controller.js";
import type { ControllerFactory } from "../../src/controllers/index.js";
import { nasVolumeController } from "../../src/controllers/nasvolume/controller.js";
import { trainingJobController } from "../../src/controllers/trainingjob/controller.js";
import { controlPlaneBinaries } from "../../src/controlplane/binaries.js";
import { nasProductCrd } from "../../src/crds/nasproduct.js";
import { nasVolumeCrd } from "../../src/crds/nasvolume.js";
import { serviceConnectionCrd } from "../../src/crds/serviceconnection.js";
import { trainingJobCrd } from "../../src/crds/trainingjob.js";
import { trainingProductCrd } from "../../src/crds/trainingproduct.js";
import { EmulatorAdmin } from "../../src/emulator/admin-client.js";
import { type RunningEmulator, startEmulator } from "../../src/emulator/server.js";
import type { KubeClient } from "../../src/runtime/kube.js";
import type { KubeObject } from "../../src/runtime/resource.js";
import { adminKubeConfig, createNamespace, eventually, kubeCacheDir } from "../support/kube.js";
import { conditionOf, EVENTS, ObjectsOf } from "../support/managed.js";
import { startTestOperator, TEST_API_KEY, type TestOperator } from "../support/operator.js";
import { connectTwoTeams, removeConnections } from "../support/two-teams.js";

const run = promisify(execFile);
const KEY_A = "catalog-team-a-key-0001";
const KEY_B = "catalog-team-b-key-0001";
const REFRESH_MS = 1_500;

let emulator: RunningEmulator;
let op: TestOperator | undefined;
let ops = "";
let teamA = "";
let teamB = "";
let connA = "";
let connB = "";

/** The catalog mirror, alone (its writes are the manager's only ones). */
const mirror: ControllerFactory = (deps) => catalogMirrorController(deps, { refusalGapMs: 1_000 });

/** An operator whose mirror reads every `refreshMs`. */
async function startOperator(refreshMs: number, extra: ControllerFactory[] = [], catalogTtlMs = 0) {
  await op?.stop();
  op = await startTestOperator({
    controllers: [mirror, ...extra],
    namespaces: [teamA],
    emulator,
    config: {
      catalog: { refreshIntervalMs: refreshMs },
      connections: { secretNamespace: ops },
      // By default every refresh reads the service (no catalog cache).
      service: {
        baseUrl: emulator.url,
        allowInsecureHttp: true,
        timeoutMs: 5_000,
        rateLimit: null,
        catalogTtlMs,
      },
    },
    service: { catalogTtlMs },
  });
  return op;
}

const admin = () => new EmulatorAdmin(emulator.url);

const kube = (): KubeClient => {
  if (!op) throw new Error("no operator");
  return op.kube;
};

/** The products of one kind with the label `aidc.io/connection=<label>`, by product code. */
async function productsOf(
  kind: typeof trainingProductCrd | typeof nasProductCrd,
  label: string,
): Promise<Map<string, KubeObject>> {
  const list = await kube().list(kind, undefined, {
    labelSelector: `aidc.io/connection=${label}`,
  });
  return new Map(
    list.items.map((o) => [String((o.spec as { productCode?: string }).productCode), o]),
  );
}

/** The product codes of an emulator account's training catalog. */
async function serviceCodes(tenant?: string): Promise<string[]> {
  const state = await admin().state(tenant);
  return state.trainingProducts.map((p) => String(p.productCode)).sort();
}

/** Writes (POST, PUT, PATCH, DELETE) the operator has sent to the API server so far. */
async function writesSoFar(): Promise<number> {
  const metric = op?.manager.metrics.registry.getSingleMetric("rest_client_requests_total");
  const values = (await metric?.get())?.values ?? [];
  return values
    .filter((v) => ["POST", "PUT", "PATCH", "DELETE"].includes(String(v.labels.method)))
    .reduce((sum, v) => sum + v.value, 0);
}

beforeAll(async () => {
  const kc = adminKubeConfig();
  [ops, teamA, teamB] = await Promise.all([
    createNamespace(kc, "catalog-ops"),
    createNamespace(kc, "catalog-a"),
    createNamespace(kc, "catalog-b"),
  ]);
  connA = `${teamA}-account`;
  connB = `${teamB}-account`;
  emulator = await startEmulator({
    apiKey: TEST_API_KEY,
    tenants: [
      { name: "a", apiKey: KEY_A },
      { name: "b", apiKey: KEY_B },
    ],
  });
  // Account b sells one product account a does not, and not a's A100 x8.
  await admin().seed(
    {
      removeProductCodes: ["train.gpu.a100.8"],
      trainingProducts: [
        {
          name: "L40S x2",
          aidcId: 2,
          productCode: "train.gpu.l40s.2",
          cpuCores: "32",
          memoryGB: "256",
          gpuName: "NVIDIA L40S",
          gpuCount: "2",
          price: "7.00",
          priceUnit: 1,
          remainingCount: 10,
        },
      ],
    },
    "b",
  );
  await startOperator(REFRESH_MS);
  await connectTwoTeams(kube(), {
    ...{ ops, teamA, teamB, connA, connB },
    ...{ keyA: KEY_A, keyB: KEY_B, baseUrl: emulator.url },
  });
}, 60_000);

afterAll(async () => {
  await removeConnections(op?.kube, [connA, connB]);
  await op?.stop();
  await emulator?.stop();
});

describe("the product catalogs", () => {
  it("mirror each connection's catalogs, each with its own products", async () => {
    const wantA = await serviceCodes("a");
    const wantB = await serviceCodes("b");
    expect(wantB).toContain("train.gpu.l40s.2");
    expect(wantB).not.toContain("train.gpu.a100.8");
    for (const [label, want] of [
      [connA, wantA],
      [connB, wantB],
      ["default_connection", await serviceCodes()],
    ] as const) {
      await eventually(async () => {
        const codes = [...(await productsOf(trainingProductCrd, label)).keys()].sort();
        return JSON.stringify(codes) === JSON.stringify(want);
      }, 20_000);
    }
    const nasCodes = (await admin().state("a")).nasProducts.map((p) => p.productCode);
    await eventually(async () => (await productsOf(nasProductCrd, connA)).size === nasCodes.length);

    const l40s = (await productsOf(trainingProductCrd, connB)).get("train.gpu.l40s.2");
    expect(l40s?.metadata?.name).toMatch(new RegExp(`^${connB}-train-gpu-l40s-2-[0-9a-f]{10}$`));
    expect(l40s?.metadata?.labels).toMatchObject({
      "aidc.io/connection": connB,
      "aidc.io/compute-center": "2",
      "aidc.io/gpu-model": "NVIDIA-L40S",
    });
    expect(l40s?.spec).toMatchObject({
      productCode: "train.gpu.l40s.2",
      connection: connB,
      computeCenterId: 2,
      gpuModel: "NVIDIA L40S",
      gpuCount: "2",
      price: "7.00",
      remainingCount: 10,
    });
    // A product of a connection belongs to it: deleted with it by the garbage collector too.
    expect(l40s?.metadata?.ownerReferences).toEqual([
      expect.objectContaining({ kind: "ServiceConnection", name: connB }),
    ]);
    // The NAS availability check's answer, as the service gives it.
    const nas = await productsOf(nasProductCrd, connA);
    const verdicts = (await admin().state("a")).nasProducts.map((p) => [
      p.productCode,
      (p as { available?: boolean }).available,
    ]);
    for (const [code, available] of verdicts) {
      expect(
        (nas.get(String(code))?.spec as { available?: boolean } | undefined)?.available,
        String(code),
      ).toBe(available);
    }
  });

  it("read like a price list with kubectl, and select by GPU model and connection", async () => {
    const kubectl = (await controlPlaneBinaries()).kubectl;
    const { stdout } = await run(
      kubectl,
      [
        "--kubeconfig",
        inject("kubeconfigPath"),
        "get",
        "trainingproducts",
        "-l",
        `aidc.io/gpu-model=NVIDIA-A100-80GB,aidc.io/connection=${connA}`,
      ],
      { env: { ...process.env, KUBECACHEDIR: kubeCacheDir() } },
    );
    const [header, ...rows] = stdout.trim().split("\n");
    expect(header).toMatch(
      /^NAME\s+CODE\s+CENTER\s+GPU\s+GPUS\s+CPU\s+MEMORY-GB\s+PRICE\s+REMAINING\s+AGE$/,
    );
    expect(rows.map((r) => r.split(/\s+/)[1]).sort()).toEqual([
      "train.gpu.a100.1",
      "train.gpu.a100.8",
    ]);
    expect(rows.find((r) => r.includes("train.gpu.a100.8"))).toMatch(
      /train\.gpu\.a100\.8\s+1\s+NVIDIA A100 80GB\s+8\s+64\s+512\s+100\.00\s+4\s/,
    );
  });

  it("follow a product added, changed and removed in the service, in that connection only", async () => {
    await admin().seed(
      {
        removeProductCodes: ["train.gpu.a100.8"],
        trainingProducts: [
          { name: "tiny", aidcId: 1, productCode: "train.tiny", cpuCores: "1", price: "0.10" },
          // The same code, a new price and stock.
          {
            ...(await admin().state("a")).trainingProducts.find(
              (p) => p.productCode === "train.cpu.16",
            ),
            price: "0.99",
            remainingCount: 3,
          },
        ],
      },
      "a",
    );
    const a = await eventually(async () => {
      const products = await productsOf(trainingProductCrd, connA);
      const cpu = products.get("train.cpu.16")?.spec as { price?: string } | undefined;
      return products.has("train.tiny") &&
        !products.has("train.gpu.a100.8") &&
        cpu?.price === "0.99"
        ? products
        : undefined;
    }, 20_000);
    expect(a.get("train.cpu.16")?.spec).toMatchObject({ remainingCount: 3 });
    // Account b's catalog did not change, nor did its objects.
    const b = await productsOf(trainingProductCrd, connB);
    expect(b.has("train.tiny")).toBe(false);
    expect((b.get("train.cpu.16")?.spec as { price?: string } | undefined)?.price).toBe("1.20");
  });

  it("write nothing while the catalogs do not change, refresh after refresh", async () => {
    // Settled: nothing written for two refresh intervals.
    await eventually(async () => {
      const before = await writesSoFar();
      await new Promise((r) => setTimeout(r, 2 * REFRESH_MS));
      return (await writesSoFar()) === before;
    }, 30_000);
    const before = await writesSoFar();
    await admin().clearRequests();
    await new Promise((r) => setTimeout(r, 4 * REFRESH_MS));
    // Each of the three connections read its catalogs again, at least three times...
    const reads = await admin().requests({ endpoint: "listTrainingProducts" });
    expect(reads.length).toBeGreaterThanOrEqual(3 * 3);
    // ...and not one write followed.
    expect(await writesSoFar()).toBe(before);
  });
});

describe("a refresh on demand", () => {
  beforeAll(async () => {
    // The default interval (10 minutes): only a request makes the mirror read now; and
    // the clients' catalog cache is on (1 minute), which a request reads past.
    // A product only this operator's first reads can find: once mirrored, they are done.
    await op?.stop();
    op = undefined;
    const marker = { trainingProducts: [{ name: "m", productCode: "train.marker" }] };
    for (const tenant of ["default", "a", "b"]) await admin().seed(marker, tenant);
    await startOperator(600_000, [trainingJobController, nasVolumeController], 60_000);
    for (const label of ["default_connection", connA, connB]) {
      await eventually(async () => {
        const products = await productsOf(trainingProductCrd, label);
        const nas = await productsOf(nasProductCrd, label);
        return products.has("train.marker") && nas.size > 0;
      });
    }
  }, 60_000);

  it("follows the annotation aidc.io/reconcile-requested-at on the ServiceConnection", async () => {
    await admin().seed(
      { trainingProducts: [{ name: "new", aidcId: 1, productCode: "train.new.1" }] },
      "a",
    );
    await new Promise((r) => setTimeout(r, 1_500));
    expect((await productsOf(trainingProductCrd, connA)).has("train.new.1")).toBe(false);
    await kube().patch(
      serviceConnectionCrd,
      { namespace: "", name: connA },
      { metadata: { annotations: { "aidc.io/reconcile-requested-at": "now-1" } } },
    );
    await eventually(async () => (await productsOf(trainingProductCrd, connA)).has("train.new.1"));
  });

  it("says a refused read (400) is read again with backoff, as the mirror does, not on the hold's slow one", async () => {
    await admin().setFaults([
      { kind: "error", endpoint: "listTrainingProducts", status: 400, message: "try later" },
    ]);
    try {
      await kube().patch(
        serviceConnectionCrd,
        { namespace: "", name: connA },
        { metadata: { annotations: { "aidc.io/reconcile-requested-at": "now-refused" } } },
      );
      const notes = await eventually(async () => {
        const { items } = await kube().list<KubeObject>(EVENTS, "");
        const found = items
          .filter((e) => (e.regarding as { name?: string } | undefined)?.name === connA)
          .filter((e) => e.reason === "CatalogReadFailed")
          .map((e) => String(e.note));
        return found.length > 0 ? found : undefined;
      });
      expect(notes[0]).toContain("with status 400: try later; read again with backoff");
      expect(notes.join("\n")).not.toContain("slow backoff");
    } finally {
      await admin().clearFaults();
    }
  });

  it("follows the annotation on a product, and echoes it in the product's status", async () => {
    await admin().seed({ removeProductCodes: ["train.new.1"] }, "a");
    const tiny = (await productsOf(trainingProductCrd, connA)).get("train.tiny");
    const name = tiny?.metadata?.name ?? "";
    await kube().patch(
      trainingProductCrd,
      { namespace: "", name },
      { metadata: { annotations: { "aidc.io/reconcile-requested-at": "now-2" } } },
    );
    await eventually(async () => !(await productsOf(trainingProductCrd, connA)).has("train.new.1"));
    await eventually(async () => {
      const obj = await kube().get(trainingProductCrd, { namespace: "", name });
      return (
        (obj?.status as { lastHandledReconcileAt?: string })?.lastHandledReconcileAt === "now-2"
      );
    });
  });

  it("puts back a product edited or deleted by hand, without asking the service", async () => {
    await admin().clearRequests();
    const products = await productsOf(trainingProductCrd, connA);
    const tiny = products.get("train.tiny")?.metadata?.name ?? "";
    const cpu = products.get("train.cpu.16")?.metadata?.name ?? "";
    await kube().patch(trainingProductCrd, { namespace: "", name: tiny }, { spec: { price: "0" } });
    await kube().delete(trainingProductCrd, { namespace: "", name: cpu });
    await eventually(async () => {
      const now = await productsOf(trainingProductCrd, connA);
      return (
        (now.get("train.tiny")?.spec as { price?: string } | undefined)?.price === "0.10" &&
        now.has("train.cpu.16")
      );
    });
    expect(await admin().requests({ endpoint: "listTrainingProducts" })).toEqual([]);
  });

  /** A TrainingJob of team a's connection for `code`, once refused for it. */
  async function refusedJob(name: string, code: string) {
    const jobs = new ObjectsOf(kube(), trainingJobCrd, teamA);
    await jobs.create(name, {
      productCode: code,
      image: "registry.example.com/ml/train:1",
      workerCount: 1,
      connectionRef: { name: connA },
    });
    await eventually(async () => {
      const obj = await jobs.get(name);
      return conditionOf(obj, "Synced")?.reason === "UnknownProductRefused";
    });
    return jobs;
  }

  it("reads the catalog again when a TrainingJob is refused for a code it lacks", async () => {
    await admin().clearRequests();
    await refusedJob("wrong-code", "train.no.such");
    // The job's preflight reads the training catalog only; the mirror reads both again.
    await eventually(
      async () => (await admin().requests({ endpoint: "listNasProducts" })).length > 0,
      10_000,
    );
  });

  it("names, in a refusal, the command that lists the catalog of the object's connection alone", async () => {
    // l40s.2 is account b's alone: the whole list has it, account a's does not.
    const jobs = await refusedJob("hinted", "train.gpu.l40s.3");
    const message = conditionOf(await jobs.get("hinted"), "Synced")?.message ?? "";
    const selector = `aidc.io/connection=${connA}`;
    expect(message).toContain(`list them with kubectl get trainingproducts -l ${selector})`);
    expect(message).not.toContain("train.gpu.l40s.2");
    const codes = async (crd: typeof trainingProductCrd, labelSelector?: string) =>
      (await kube().list(crd, undefined, labelSelector ? { labelSelector } : {})).items.map(
        (o) => (o.spec as { productCode?: string }).productCode,
      );
    expect(await codes(trainingProductCrd)).toContain("train.gpu.l40s.2");
    expect(await codes(trainingProductCrd, selector)).not.toContain("train.gpu.l40s.2");
    expect(await codes(trainingProductCrd, selector)).toContain("train.gpu.a100.1");
    // A NasVolume's names its compute center too.
    const volumes = new ObjectsOf(kube(), nasVolumeCrd, teamA);
    await volumes.create("hinted-nas", {
      ...{ productCode: "nas.no.such", aidcId: 1, capacityGB: 100 },
      connectionRef: { name: connA },
    });
    const why = "ProductNotFoundRefused";
    const refused = await volumes.waitForCondition("hinted-nas", "Synced", "False", why);
    expect(conditionOf(refused, "Synced")?.message).toContain(
      `list them with kubectl get nasproducts -l ${selector},aidc.io/compute-center=1)`,
    );
    await volumes.delete("hinted-nas");
    await jobs.delete("hinted");
  });

  it("orders a TrainingJob refused for a code once the product appears in its catalog", async () => {
    const jobs = await refusedJob("early-code", "train.late");
    const late = { name: "Late", aidcId: 1, productCode: "train.late", remainingCount: 10 };
    await admin().seed({ trainingProducts: [{ ...late, cpuCores: "8", memoryGB: "64" }] }, "a");
    // The catalog is read again on request; the job itself is left as it is.
    await kube().patch(
      serviceConnectionCrd,
      { namespace: "", name: connA },
      {
        metadata: { annotations: { "aidc.io/reconcile-requested-at": "late-product" } },
      },
    );
    await eventually(async () => (await productsOf(trainingProductCrd, connA)).has("train.late"));
    await eventually(async () => {
      const obj = await jobs.get("early-code");
      return (obj?.status as { taskId?: string } | undefined)?.taskId !== undefined;
    }, 15_000);
  });

  it("orders a NasVolume refused for a code once the product appears in its catalog", async () => {
    const volumes = new ObjectsOf(kube(), nasVolumeCrd, teamA);
    await volumes.create("early-nas", {
      ...{ productCode: "nas.late", aidcId: 1, capacityGB: 100, name: "early-nas" },
      connectionRef: { name: connA },
    });
    await eventually(async () => {
      const obj = await volumes.get("early-nas");
      return conditionOf(obj, "Synced")?.reason === "ProductNotFoundRefused";
    });
    const late = { name: "Late NAS", aidcId: 1, productCode: "nas.late", price: "0.30" };
    const bounds = { paramValue: "100", paramValueMin: 100, paramValueMax: 1000 };
    await admin().seed({ nasProducts: [{ ...late, ...bounds }] }, "a");
    await kube().patch(
      serviceConnectionCrd,
      { namespace: "", name: connA },
      { metadata: { annotations: { "aidc.io/reconcile-requested-at": "late-nas" } } },
    );
    await eventually(async () => (await productsOf(nasProductCrd, connA)).has("nas.late"));
    await eventually(async () => {
      const obj = await volumes.get("early-nas");
      return (obj?.status as { storageId?: string } | undefined)?.storageId !== undefined;
    }, 15_000);
  });

  it("deletes a connection's products with the connection", async () => {
    expect((await productsOf(trainingProductCrd, connB)).size).toBeGreaterThan(0);
    await removeConnections(kube(), [connB]);
    await eventually(async () => (await productsOf(trainingProductCrd, connB)).size === 0);
    await eventually(async () => (await productsOf(nasProductCrd, connB)).size === 0);
  });
});
