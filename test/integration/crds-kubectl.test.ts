import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { controlPlaneBinaries } from "../../src/controlplane/binaries.js";
import { allCrds } from "../../src/crds/index.js";
import { installCrds } from "../support/crds.js";
import {
  adminKubeConfig,
  createNamespace,
  deleteNamespace,
  eventually,
  kubeCacheDir,
} from "../support/kube.js";
import { kustomizedSamples, SAMPLES_DIR } from "../support/samples.js";

const run = promisify(execFile);

/** What an ML engineer sees with kubectl: explain, apply -k, get, and a refused apply. */
describe("the CRDs through kubectl", () => {
  let kubectlPath = "";
  let namespace = "";

  /** Runs kubectl; resolves with stdout and stderr and the exit code (never throws). */
  const kubectl = async (args: string[], stdin?: string) => {
    const child = run(kubectlPath, ["--kubeconfig", inject("kubeconfigPath"), ...args], {
      env: { ...process.env, KUBECACHEDIR: kubeCacheDir() },
    });
    if (stdin !== undefined) child.child.stdin?.end(stdin);
    return child.then(
      ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
      (e: { code?: number; stdout?: string; stderr?: string }) => ({
        code: e.code ?? 1,
        stdout: e.stdout ?? "",
        stderr: e.stderr ?? "",
      }),
    );
  };

  beforeAll(async () => {
    kubectlPath = (await controlPlaneBinaries()).kubectl;
    const kc = adminKubeConfig();
    await installCrds(kc);
    namespace = await createNamespace(kc, "kubectl");
  });

  // The applied samples are left to no operator: gone before the next file, whose
  // operator may watch all namespaces (test/e2e/operator-as-chart-serviceaccount.test.ts).
  afterAll(async () => {
    if (namespace) await deleteNamespace(adminKubeConfig(), namespace);
  });

  it("explains a field with its description", async () => {
    // Right after the install, discovery and the OpenAPI document may lag a moment.
    const out = await eventually(async () => {
      const r = await kubectl(["explain", "trainingjob.spec.priority"]);
      return r.code === 0 ? r : undefined;
    });
    expect(out.stdout).toContain(
      "Scheduling priority 1 to 3; a smaller number is a higher priority",
    );
    // Wrapped by kubectl; the words that say where an omitted priority comes from.
    expect(out.stdout.replace(/\s+/g, " ")).toContain(
      "When omitted: the template's priority (createType TEMPLATE), the source job's (COPY), else 3",
    );
  });

  it("explains a FileSystem mount's target", async () => {
    const out = await eventually(async () => {
      const r = await kubectl(["explain", "filesystem.spec.mounts.target.cciInstanceRef"]);
      return r.code === 0 ? r : undefined;
    });
    expect(out.stdout.replace(/\s+/g, " ")).toContain(
      "The CciInstance (same namespace) whose instance the file system is mounted on",
    );
  });

  it("applies the samples with kubectl apply -k and lists them under the aidc category", async () => {
    const applied = await kubectl(["apply", "--server-side", "-n", namespace, "-k", SAMPLES_DIR]);
    expect(applied.stderr).toBe("");
    expect(applied.code).toBe(0);
    const got = await kubectl(["get", "aidc", "-n", namespace, "-o", "name"]);
    expect(got.stderr).toBe("");
    // Every object of the kustomization (one sample per namespaced kind), by its kind's group.
    const expected = kustomizedSamples().map((o) => {
      const def = allCrds.find((d) => d.kind === o.kind);
      return `${o.kind.toLowerCase()}.${def?.group ?? "not-a-kind"}/${o.name}`;
    });
    expect(expected.length).toBe(allCrds.filter((d) => d.namespaced).length);
    // A cluster-scoped kind (ServiceConnection) is listed whatever -n says: whatever
    // connections other files keep on this control plane are left out.
    const clusterScoped = allCrds
      .filter((d) => !d.namespaced)
      .map((d) => `${d.kind.toLowerCase()}.${d.group}/`);
    const listed = got.stdout
      .trim()
      .split("\n")
      .filter((l) => !clusterScoped.some((prefix) => l.startsWith(prefix)));
    expect(listed.sort()).toEqual(expected.sort());
    const fsTable = await kubectl(["get", "fs", "-n", namespace]);
    expect(fsTable.stdout.split("\n")[0]).toMatch(
      /^NAME\s+PHASE\s+SIZE\s+PROTOCOL\s+MOUNTS\s+READY\s+SYNCED\s+REASON\s+AGE\s*$/,
    );
    const table = await kubectl(["get", "tj", "-n", namespace]);
    expect(table.stdout.split("\n")[0]).toMatch(
      /^NAME\s+STATUS\s+TASK-ID\s+READY\s+SYNCED\s+REASON\s+AGE\s*$/,
    );
    const bv = await kubectl(["get", "bv", "-n", namespace]);
    expect(bv.stdout.split("\n")[0]).toMatch(
      /^NAME\s+PHASE\s+SIZE\s+TYPE\s+ATTACHED-TO\s+READY\s+SYNCED\s+REASON\s+AGE\s*$/,
    );
  });

  it("refuses kubectl apply of a changed image with a message that says why", async () => {
    const manifest = (image: string) =>
      JSON.stringify({
        apiVersion: "aidc.io/v1alpha1",
        kind: "TrainingJob",
        metadata: { name: "apply-image", namespace },
        spec: { image, productCode: "gpu-1x", workerCount: 1 },
      });
    expect((await kubectl(["apply", "-f", "-"], manifest("train:1"))).code).toBe(0);
    const changed = await kubectl(["apply", "-f", "-"], manifest("train:2"));
    expect(changed.code).not.toBe(0);
    expect(changed.stderr).toContain("spec.image");
    expect(changed.stderr).toContain(
      "image is immutable (a limit of the service): the service cannot change a submitted training task",
    );
  });

  it("refuses spec.managementPolicies on a CciInstance or a ServiceConnection, which have none, instead of dropping it", async () => {
    const cci = {
      apiVersion: "aidc.io/v1alpha1",
      kind: "CciInstance",
      metadata: { name: "observe-only", namespace },
      spec: { instanceId: "cci-1", managementPolicies: ["Observe"] },
    };
    const refused = await kubectl(["apply", "-f", "-"], JSON.stringify(cci));
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('unknown field "spec.managementPolicies"');
    const conn = {
      apiVersion: "aidc.io/v1alpha1",
      kind: "ServiceConnection",
      metadata: { name: `${namespace}-observe-only` },
      spec: {
        baseUrl: "https://aidc.example.com",
        apiKeySecretRef: { namespace, name: "key", key: "apiKey" },
        managementPolicies: ["Observe"],
      },
    };
    const also = await kubectl(["apply", "-f", "-"], JSON.stringify(conn));
    expect(also.code).not.toBe(0);
    expect(also.stderr).toContain('unknown field "spec.managementPolicies"');
  });
});
