import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import * as k8s from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { root } from "../../scripts/generated-files.js";
import { trainingJobCrd } from "../../src/crds/trainingjob.js";
import { KubeClient } from "../../src/runtime/kube.js";
import {
  CHART_DIR,
  CHART_TEST_BASE_URL,
  helmTemplate,
  helmUninstall,
  installChartCrds,
  operatorKubeConfigFor,
  parseObjects,
  randomSuffix,
  runTool,
  setArgs,
} from "../support/chart.js";
import { adminKubeConfig, createNamespace } from "../support/kube.js";
import { operatorEntry } from "../support/operator-process.js";

const exec = promisify(execFile);

/**
 * `helm uninstall` while custom resources exist: the chart's pre-delete hook runs
 * `aidc-operator uninstall-check`, which fails listing them. There is no kubelet here,
 * so the hook's Job never runs: the check is run as its ServiceAccount from here, and
 * the uninstall is shown to wait on the hook.
 */
describe("the uninstall check (pre-delete hook)", () => {
  const admin = adminKubeConfig();
  const kube = new KubeClient(admin);
  const release = `unin-${randomSuffix()}`;
  let namespace = "";
  let watched = "";
  let dir = "";

  /** `aidc-operator uninstall-check` with a kubeconfig; resolves with code and output. */
  async function check(kubeconfig: string, namespaces: string) {
    try {
      const { stdout, stderr } = await exec(
        process.execPath,
        [
          ...operatorEntry(),
          "uninstall-check",
          "--kubeconfig",
          kubeconfig,
          "--namespaces",
          namespaces,
        ],
        { cwd: root },
      );
      return { code: 0, out: stdout + stderr };
    } catch (err) {
      const e = err as { code?: number; stdout?: string; stderr?: string };
      return { code: e.code ?? -1, out: (e.stdout ?? "") + (e.stderr ?? "") };
    }
  }

  beforeAll(async () => {
    await installChartCrds();
    namespace = await createNamespace(admin, "unin");
    watched = await createNamespace(admin, "unin-team");
    dir = await mkdtemp(join(tmpdir(), "aidc-uninstall-"));
    await runTool("helm", [
      "install",
      release,
      CHART_DIR,
      "--namespace",
      namespace,
      ...setArgs({ "service.baseUrl": CHART_TEST_BASE_URL, "watchNamespaces[0]": watched }),
    ]);
  });

  afterAll(async () => {
    await helmUninstall(release, namespace).catch(() => undefined);
    await rm(dir, { recursive: true, force: true });
  });

  it("renders a pre-delete hook Job that runs the check as the operator's ServiceAccount", async () => {
    const objects = parseObjects(await helmTemplate("r", "ns", { "watchNamespaces[0]": "team-a" }));
    const job = objects.find((o) => o.kind === "Job") as unknown as {
      metadata: { name: string; annotations: Record<string, string> };
      spec: { backoffLimit: number; template: { spec: Record<string, unknown> } };
    };
    expect(job.metadata.name).toBe("r-aidc-operator-uninstall-check");
    expect(job.metadata.annotations).toMatchObject({
      "helm.sh/hook": "pre-delete",
      "helm.sh/hook-delete-policy": "before-hook-creation,hook-succeeded",
    });
    expect(job.spec.backoffLimit).toBe(0);
    expect(job.spec.template.spec).toMatchObject({
      serviceAccountName: "r-aidc-operator",
      restartPolicy: "Never",
      containers: [expect.objectContaining({ args: ["uninstall-check", "--namespaces=team-a"] })],
    });
    const off = parseObjects(await helmTemplate("r", "ns", { "uninstallCheck.enabled": false }));
    expect(off.filter((o) => o.kind === "Job")).toEqual([]);
  });

  it("fails, listing them, while custom resources exist where the operator watches, as its ServiceAccount", async () => {
    const asOperator = operatorKubeConfigFor({ namespace, name: `${release}-aidc-operator` });
    const kubeconfig = join(dir, "operator.kubeconfig");
    await writeFile(kubeconfig, asOperator.exportConfig(), { mode: 0o600 });

    expect(await check(kubeconfig, watched)).toMatchObject({
      code: 0,
      out: expect.stringContaining("no custom resource of aidc-operator is left"),
    });
    await kube.create(trainingJobCrd, {
      metadata: { name: "still-here", namespace: watched },
      spec: {
        image: "registry.example.com/ml/train:1",
        productCode: "train.cpu.16",
        workerCount: 1,
      },
    });
    const refused = await check(kubeconfig, watched);
    expect(refused.code).toBe(1);
    expect(refused.out).toContain("uninstall refused: 1 custom resource(s) of aidc-operator");
    expect(refused.out).toContain(`TrainingJob ${watched}/still-here`);
    expect(refused.out).toContain("kubectl annotate aidc --all -A aidc.io/paused-");
    expect(refused.out).toContain("kubectl delete aidc --all -A --wait");
    expect(refused.out).toContain("--no-hooks");

    await kube.delete(trainingJobCrd, { namespace: watched, name: "still-here" });
    expect((await check(kubeconfig, watched)).code).toBe(0);
  });

  it("makes helm uninstall wait for the hook: nothing is removed until it succeeds", async () => {
    await expect(
      runTool("helm", ["uninstall", release, "--namespace", namespace, "--timeout", "5s"]),
    ).rejects.toThrow(/pre-delete hooks failed|timed out waiting/);
    const apps = admin.makeApiClient(k8s.AppsV1Api);
    const deployment = await apps.readNamespacedDeployment({
      namespace,
      name: `${release}-aidc-operator`,
    });
    expect(deployment.metadata?.deletionTimestamp).toBeUndefined();
    const { stdout } = await runTool("kubectl", [
      "get",
      "job",
      `${release}-aidc-operator-uninstall-check`,
      "-n",
      namespace,
      "-o",
      "name",
    ]);
    expect(stdout.trim()).toBe(`job.batch/${release}-aidc-operator-uninstall-check`);
  });
});
