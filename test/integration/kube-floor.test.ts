import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import * as k8s from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { controlPlaneBinaries, repoRoot } from "../../src/controlplane/binaries.js";
import { LocalControlPlane } from "../../src/controlplane/controlplane.js";
import { allCrds } from "../../src/crds/index.js";
import { kubeRequest } from "../support/http.js";
import { createNamespace, eventually } from "../support/kube.js";
import {
  adminAccess,
  type NetworkTestBed,
  READY_MS,
  startNetworkOperator,
  startNetworkTestBed,
  UserNasVolumes,
  writeKubeconfig,
} from "../support/network-operator.js";
import { expectRefused, invalidCases } from "./invalid-manifests.js";

const run = promisify(execFile);

/** The minor version of the chart's kubeVersion floor (`>=1.30.0-0`). */
function chartFloorMinor(): number {
  const chart = readFileSync(join(repoRoot, "charts", "aidc-operator", "Chart.yaml"), "utf8");
  const floor = /^kubeVersion: ">=1\.(\d+)\.0-0"$/m.exec(chart);
  if (!floor) throw new Error("Chart.yaml has no kubeVersion of the form >=1.N.0-0");
  return Number(floor[1]);
}

/**
 * The oldest Kubernetes the chart and docs/install.md claim, built from
 * tools/controlplane/kubernetes-floor on a control plane of its own: the kustomize base
 * applies as install.md says, the CRDs' rules refuse what they must naming the field,
 * and the operator makes a NasVolume Ready, and another after the API server restarted
 * under its watches and its Lease.
 */
describe("the operator on the oldest Kubernetes it supports", () => {
  let plane: LocalControlPlane;
  let kc: k8s.KubeConfig;
  let kubectl = "";
  let bed: NetworkTestBed | undefined;

  beforeAll(async () => {
    const binaries = await controlPlaneBinaries({ kubernetes: "kubernetes-floor" });
    kubectl = binaries.kubectl;
    plane = await new LocalControlPlane({ binaries }).start();
    kc = new k8s.KubeConfig();
    kc.loadFromFile(plane.kubeconfigPath);
  }, 180_000);

  afterAll(async () => {
    await bed?.stop();
    await plane?.stop();
  });

  it("is the version Chart.yaml, install.md and getting-started.md name", async () => {
    const minor = chartFloorMinor();
    expect(await plane.version()).toMatch(new RegExp(`^v1\\.${minor}\\.\\d+$`));
    for (const page of ["install.md", "getting-started.md"]) {
      const text = readFileSync(join(repoRoot, "docs", page), "utf8").replaceAll("\n", " ");
      expect(text, page).toContain(`Kubernetes 1.${minor} or later`);
    }
  });

  it("applies the kustomize base with its kubectl, as install.md does", async () => {
    await run(kubectl, [
      "--kubeconfig",
      plane.kubeconfigPath,
      "apply",
      "--server-side",
      "-k",
      join(repoRoot, "deploy"),
    ]);
    await run(kubectl, [
      "--kubeconfig",
      plane.kubeconfigPath,
      "wait",
      "--for=condition=Established",
      "--timeout=60s",
      ...allCrds.map((d) => `crd/${d.plural}.${d.group}`),
    ]);
  });

  it("refuses every invalid manifest of crds-validation.test.ts, naming the field", async () => {
    const custom = kc.makeApiClient(k8s.CustomObjectsApi);
    const namespace = await createNamespace(kc, "floor-invalid");
    for (const [i, c] of invalidCases.entries()) {
      await expectRefused(custom, namespace, c, `bad-${i}`);
    }
  });

  it("makes a NasVolume Ready, and another after the API server restarted", async () => {
    bed = await startNetworkTestBed(kc);
    const { emulator, dir } = bed;
    const namespace = await createNamespace(kc, "floor");
    const kubeconfig = await writeKubeconfig(
      join(dir, "floor"),
      { floor: adminAccess(kc) },
      "floor",
    );
    const op = await startNetworkOperator({
      emulatorUrl: emulator.url,
      namespaces: [namespace],
      kubeconfig,
      // A Lease that outlasts the restart (else the leader steps down and exits).
      config: {
        leaderElection: {
          enabled: true,
          leaseName: "floor",
          leaseNamespace: namespace,
          leaseDurationMs: 60_000,
          renewDeadlineMs: 40_000,
          retryPeriodMs: 2_000,
        },
      },
    });
    const nas = new UserNasVolumes(kc, namespace);
    let code: number | string = "not stopped";
    try {
      await nas.create("first");
      await nas.waitReady("first", READY_MS, op);
      await plane.stopApiServer();
      await plane.startApiServer();
      // A restarted API server answers 429 for a custom resource until its storage is ready.
      await eventually(
        async () =>
          (await kubeRequest(kc, "GET", "/apis/aidc.io/v1alpha1/nasvolumes?limit=1")).status ===
          200,
        60_000,
      );
      await nas.create("last");
      await nas.waitReady("last", READY_MS, op);
      expect(op.manager()?.running).toBe(true);
    } finally {
      code = await op.stop();
    }
    expect(code, op.logTail()).toBe(0);
    // One NAS each: nothing ordered twice across the restart.
    expect([...emulator.state.nas.values()].map((n) => n.name).sort()).toEqual(["first", "last"]);
  }, 240_000);
});
