import { readFileSync } from "node:fs";
import { join } from "node:path";
import * as k8s from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse, stringify } from "yaml";
import { root } from "../../scripts/generated-files.js";
import { trainingJobCrd } from "../../src/crds/trainingjob.js";
import { KubeClient } from "../../src/runtime/kube.js";
import {
  CHART_DIR,
  CHART_TEST_BASE_URL,
  helmTemplate,
  helmUninstall,
  installChartCrds,
  parseObjects,
  randomSuffix,
  runTool,
  setArgs,
} from "../support/chart.js";
import { buildImageLayout, type ImageLayout } from "../support/image-layout.js";
import { adminKubeConfig, createNamespace, eventually } from "../support/kube.js";
import { type Kubelet, startKubelet } from "../support/kubelet.js";
import { operatorImageRunner } from "../support/kubelet-run.js";

/**
 * `helm uninstall` while custom resources exist, and an Argo CD Application's deletion:
 * the chart's pre-delete hook Job runs `aidc-operator uninstall-check`, which fails
 * listing them. test/support/kubelet.ts
 * runs the Job's pod from the built operator, as the image would, with a token of the
 * Job's ServiceAccount (test/support/kubelet-run.ts).
 */
describe("the uninstall check (pre-delete hook)", () => {
  const admin = adminKubeConfig();
  const kube = new KubeClient(admin);
  const core = admin.makeApiClient(k8s.CoreV1Api);
  const apps = admin.makeApiClient(k8s.AppsV1Api);
  const release = `unin-${randomSuffix()}`;
  const hookJob = `${release}-aidc-operator-uninstall-check`;
  let namespace = "";
  /** The two namespaces the release watches; the object is left in the second. */
  let watched: [string, string] = ["", ""];
  let layout: ImageLayout | undefined;
  let kubelet: Kubelet | undefined;

  beforeAll(async () => {
    await installChartCrds();
    namespace = await createNamespace(admin, "unin");
    // The API server admits only pods of Pod Security `restricted` here (docs/install.md).
    await runTool("kubectl", [
      "label",
      "namespace",
      namespace,
      "pod-security.kubernetes.io/enforce=restricted",
    ]);
    watched = [await createNamespace(admin, "unin-a"), await createNamespace(admin, "unin-b")];
    layout = await buildImageLayout();
    const values = parse(readFileSync(join(root, CHART_DIR, "values.yaml"), "utf8"));
    const runner = operatorImageRunner(admin, layout, values.image.repository);
    kubelet = await startKubelet(admin, undefined, runner);
    kubelet.serve(namespace);
    await runTool("helm", [
      "install",
      release,
      CHART_DIR,
      "--namespace",
      namespace,
      ...setArgs({
        "service.baseUrl": CHART_TEST_BASE_URL,
        "watchNamespaces[0]": watched[0],
        "watchNamespaces[1]": watched[1],
      }),
    ]);
    // Hardened as the CIS Kubernetes Benchmark (5.1.6) advises: the ServiceAccount mounts
    // no token in a pod that does not ask for one. The chart's pods ask.
    await core.patchNamespacedServiceAccount(
      {
        namespace,
        name: `${release}-aidc-operator`,
        body: { automountServiceAccountToken: false },
      },
      k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch),
    );
  });

  afterAll(async () => {
    await helmUninstall(release, namespace).catch(() => undefined);
    await kubelet?.stop();
    await layout?.remove();
  });

  /** A TrainingJob the uninstall check must find. */
  const leaveTrainingJob = (ns: string, name: string) =>
    kube.create(trainingJobCrd, {
      metadata: { name, namespace: ns },
      spec: {
        image: "registry.example.com/ml/train:1",
        productCode: "train.cpu.16",
        workerCount: 1,
      },
    });

  /** The hook Job, or undefined once it is gone. */
  const readJob = () =>
    admin
      .makeApiClient(k8s.BatchV1Api)
      .readNamespacedJob({ namespace, name: hookJob })
      .catch(() => undefined);

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

  it("refuses helm uninstall by its Job while a custom resource is left, and removes nothing", async () => {
    await leaveTrainingJob(watched[1], "still-here");
    await expect(
      runTool("helm", ["uninstall", release, "--namespace", namespace, "--timeout", "60s"]),
    ).rejects.toThrow(`job ${hookJob} failed: BackoffLimitExceeded`);

    const runs = kubelet?.ran(namespace) ?? [];
    expect(runs.map((r) => [r.pod.slice(0, hookJob.length), r.exit.exitCode])).toEqual([
      [hookJob, 1],
    ]);
    const log = runs[0]?.exit.log ?? "";
    expect(log).toContain("uninstall refused: 1 custom resource(s) of aidc-operator");
    expect(log).toContain(`TrainingJob ${watched[1]}/still-here`);
    expect(log).toContain("kubectl annotate aidc --all -A aidc.io/paused-");
    expect(log).toContain("kubectl delete aidc --all -A --wait");
    expect(log).toContain("--no-hooks");
    const pod = await core.readNamespacedPod({ namespace, name: runs[0]?.pod ?? "" });
    expect(pod.status?.phase).toBe("Failed");
    // The failed Job is kept for its log.
    const failed = await readJob();
    expect(failed?.status?.conditions).toContainEqual(
      expect.objectContaining({ type: "Failed", status: "True", reason: "BackoffLimitExceeded" }),
    );

    const deployment = await apps.readNamespacedDeployment({
      namespace,
      name: `${release}-aidc-operator`,
    });
    expect(deployment.metadata?.deletionTimestamp).toBeUndefined();
    expect(
      await kube.get(trainingJobCrd, { namespace: watched[1], name: "still-here" }),
    ).toBeDefined();
  });

  it("lets helm uninstall proceed once none is left: its Job succeeds and is deleted", async () => {
    await kube.delete(trainingJobCrd, { namespace: watched[1], name: "still-here" });
    await runTool("helm", ["uninstall", release, "--namespace", namespace, "--timeout", "60s"]);

    const runs = kubelet?.ran(namespace) ?? [];
    expect(runs.map((r) => [r.pod.slice(0, hookJob.length), r.exit.exitCode])).toEqual([
      [hookJob, 1],
      [hookJob, 0],
    ]);
    expect(runs[1]?.exit.log).toContain("no custom resource of aidc-operator is left");
    // hook-succeeded deletes it; before-hook-creation deleted the failed one.
    expect(await readJob()).toBeUndefined();
    await eventually(() =>
      apps.readNamespacedDeployment({ namespace, name: `${release}-aidc-operator` }).then(
        () => false,
        () => true,
      ),
    );
  });

  /**
   * Argo CD (3.3 and later, controller/hook.go) runs no `helm uninstall`: it has applied
   * what `helm template` renders but the hooks, and on the Application's deletion
   * creates the `pre-delete` Job as its PreDelete hook; a Failed Job (Degraded) blocks
   * the deletion and is deleted and created again until it completes (Healthy).
   */
  it("blocks an Argo CD Application's deletion the same way: the rendered Job created as its PreDelete hook", async () => {
    const app = `argo-${randomSuffix()}`;
    const argoNamespace = await createNamespace(admin, "unin-argo");
    await runTool("kubectl", [
      "label",
      "namespace",
      argoNamespace,
      "pod-security.kubernetes.io/enforce=restricted",
    ]);
    kubelet?.serve(argoNamespace);
    const rendered = parseObjects(
      await helmTemplate(app, argoNamespace, {
        replicas: 1,
        "watchNamespaces[0]": watched[0],
        "watchNamespaces[1]": watched[1],
      }),
    );
    const hooks = rendered.filter((o) => o.metadata.annotations?.["helm.sh/hook"]);
    expect(hooks.map((o) => [o.kind, o.metadata.annotations?.["helm.sh/hook"]])).toEqual([
      ["Job", "pre-delete"],
    ]);
    const synced = rendered.filter((o) => !hooks.includes(o));
    const stream = (objects: object[]) => objects.map((o) => stringify(o)).join("---\n");
    try {
      // Argo CD's sync: a client-side apply of the rendered objects but the hooks.
      await runTool("kubectl", ["apply", "-f", "-"], stream(synced));
      await leaveTrainingJob(watched[0], "argo-left");
      const job = `${app}-aidc-operator-uninstall-check`;
      const jobCondition = (type: string) =>
        eventually(async () => {
          const { stdout } = await runTool("kubectl", [
            "get",
            "job",
            job,
            "-n",
            argoNamespace,
            "-o",
            `jsonpath={.status.conditions[?(@.type=="${type}")].status}`,
          ]);
          return stdout === "True";
        }, 60_000);
      await runTool("kubectl", ["create", "-f", "-"], stream(hooks));
      await jobCondition("Failed");
      let runs = kubelet?.ran(argoNamespace) ?? [];
      expect(runs.map((r) => [r.pod.slice(0, job.length), r.exit.exitCode])).toEqual([[job, 1]]);
      expect(runs[0]?.exit.log).toContain(`TrainingJob ${watched[0]}/argo-left`);

      // The object deleted, Argo CD deletes the Degraded hook (foreground) and creates it again.
      await kube.delete(trainingJobCrd, { namespace: watched[0], name: "argo-left" });
      await runTool("kubectl", ["delete", "job", job, "-n", argoNamespace, "--cascade=foreground"]);
      await runTool("kubectl", ["create", "-f", "-"], stream(hooks));
      await jobCondition("Complete");
      runs = kubelet?.ran(argoNamespace) ?? [];
      expect(runs.map((r) => [r.pod.slice(0, job.length), r.exit.exitCode])).toEqual([
        [job, 1],
        [job, 0],
      ]);
      expect(runs[1]?.exit.log).toContain("no custom resource of aidc-operator is left");
    } finally {
      await runTool("kubectl", ["delete", "--ignore-not-found", "-f", "-"], stream(rendered));
    }
  });
});
