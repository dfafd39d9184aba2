import { mkdirSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as k8s from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningEmulator, startEmulator } from "../../src/emulator/server.js";
import { parseObjects, randomSuffix, runTool, setArgs } from "../support/chart.js";
import { documentedHelmUpgrade } from "../support/chart-copy.js";
import { type InstalledOperator, startInstalledOperator } from "../support/chart-operator.js";
import { documentedMove, writeDocumentedOverlay } from "../support/install-doc.js";
import { adminKubeConfig, eventually } from "../support/kube.js";
import { type Kubelet, podReady, startKubelet } from "../support/kubelet.js";

/**
 * docs/install.md's move of a kustomize install (its overlay, applied client-side or
 * server-side) to a Helm release of the same namespace and names, with Helm 3 and 4, as
 * the docs write it. The operator runs as the install's ServiceAccount with the
 * install's config, first the kustomize one, then (the roll) the chart's; a NasVolume
 * made Ready before the move keeps its remote id with no remote create or delete. The
 * Deployment's pods (test/support/kubelet.ts) roll to the chart's template.
 */

const API_KEY = "kustomize-to-helm-key-0123456789";
const RELEASE = "aidc-operator";
const NAS = { group: "aidc.io", version: "v1alpha1", plural: "nasvolumes" };
const CLIENT_SIDE = ["apply"];
const SERVER_SIDE = ["apply", "--server-side", "--force-conflicts"];

/** What the test reads of the operator's Deployment. */
interface Deployment {
  metadata: { labels: Record<string, string>; annotations: Record<string, string> };
  spec: {
    replicas: number;
    template: {
      metadata: { labels: Record<string, string> };
      spec: { containers: { image: string; env: { name: string }[] }[] };
    };
  };
}

interface NasVolume {
  metadata: { annotations?: Record<string, string>; generation?: number };
  status?: { conditions?: { type: string; status: string; observedGeneration?: number }[] };
}

describe("moving a kustomize install to Helm as docs/install.md says", () => {
  const admin = adminKubeConfig();
  const custom = admin.makeApiClient(k8s.CustomObjectsApi);
  let dir = "";
  let kubelet: Kubelet;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "aidc-move-"));
    kubelet = await startKubelet(admin);
  });

  afterAll(async () => {
    await kubelet?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  /**
   * A NasVolume whose storage is named `<name>-<namespace>` (the emulator's log finds
   * it by that), left in the service when deleted.
   */
  async function createNas(namespace: string, name: string): Promise<void> {
    await custom.createNamespacedCustomObject({
      ...NAS,
      namespace,
      body: {
        apiVersion: "aidc.io/v1alpha1",
        kind: "NasVolume",
        metadata: { name },
        spec: {
          productCode: "nas.capacity.standard",
          name: `${name}-${namespace}`,
          capacityGB: 100,
          mountPath: "/mnt/data",
          deletionPolicy: "Orphan",
        },
      },
    });
  }

  /** Waits until the NasVolume is Ready for its generation; its remote id. */
  async function readyId(namespace: string, name: string): Promise<string> {
    let last: unknown;
    return eventually(
      async () => {
        const o = (await custom.getNamespacedCustomObject({
          ...NAS,
          namespace,
          name,
        })) as NasVolume;
        last = o.status?.conditions;
        const ready = o.status?.conditions?.find((c) => c.type === "Ready");
        const ok = ready?.status === "True" && ready.observedGeneration === o.metadata.generation;
        return ok ? o.metadata.annotations?.["aidc.io/external-id"] : undefined;
      },
      60_000,
      500,
    ).catch((err: Error) => {
      throw new Error(`${name} not Ready: ${JSON.stringify(last)} (${err.message})`);
    });
  }

  // `older`: the objects labelled and annotated as docs/install.md says for a Helm
  // without --take-ownership, which the move then goes without.
  const CSA = { mode: "client-side", apply: CLIENT_SIDE, manager: "kubectl-client-side-apply" };
  const SSA = { mode: "server-side", apply: SERVER_SIDE, manager: "kubectl" };
  it.each([
    { tool: "helm", ...CSA, older: false },
    { tool: "helm", ...SSA, older: false },
    { tool: "helm4", ...CSA, older: false },
    { tool: "helm4", ...SSA, older: false },
    { tool: "helm", ...SSA, older: true },
  ] as const)(
    "moves an install applied $mode to a $tool release (labelled first: $older): nothing deleted, the operator carries on",
    async ({ tool, apply, manager, older }) => {
      const namespace = `move-${tool}-${randomSuffix()}`;
      const overlay = join(dir, namespace);
      mkdirSync(overlay);
      writeDocumentedOverlay(overlay, namespace);
      // The shared control plane's CRDs are in the overlay too: server-side, another
      // test's field manager holds them (a user's own install has no such conflict).
      await runTool("kubectl", [...apply, "-k", overlay]);
      kubelet.serve(namespace);
      /** The names of the Deployment's pods once they are `d`'s replicas of its template, ready. */
      const podsOf = async (d: Deployment) => {
        const pods = await kubelet.pods(namespace);
        const labels = Object.entries(d.spec.template.metadata.labels);
        const ofD = (p: (typeof pods)[number]) =>
          labels.every(([k, v]) => p.metadata?.labels?.[k] === v) && podReady(p);
        const done = pods.length === d.spec.replicas && pods.every(ofD);
        return done && pods.map((p) => p.metadata?.name as string);
      };
      const installed = async () =>
        (await runTool("kubectl", ["get", "-k", overlay, "-o", "name"])).stdout.trim().split("\n");
      const objects = await installed();
      await admin.makeApiClient(k8s.CoreV1Api).createNamespacedSecret({
        namespace,
        body: { metadata: { name: "aidc-operator-api-key" }, stringData: { apiKey: API_KEY } },
      });

      const emulator: RunningEmulator = await startEmulator({
        apiKey: API_KEY,
        subscriptionDelayMs: 300,
      });
      const operator = (podName: string) =>
        startInstalledOperator({
          fullname: RELEASE,
          namespace,
          serviceAccount: { namespace, name: RELEASE },
          apiKeySecret: "aidc-operator-api-key",
          serviceUrl: emulator.url,
          podName,
          dir: overlay,
          objectStorage: false,
        });
      let running: InstalledOperator = await operator("kustomize-0");
      try {
        await createNas(namespace, "first");
        const firstId = await readyId(namespace, "first");
        const since = emulator.requestLog.lastSeq();
        const deployment = async () =>
          JSON.parse(
            (
              await runTool("kubectl", [
                "get",
                "deployment",
                RELEASE,
                "-n",
                namespace,
                "-o",
                "json",
              ])
            ).stdout,
          ) as Deployment;
        const kustomized = await deployment();
        const kustomizedPods = await eventually(() => podsOf(kustomized));

        const move = documentedMove(namespace, overlay, "https://service.example.com");
        if (tool === "helm4") {
          // Without the documented flag: conflicts with kubectl's fields, changes nothing.
          await expect(runTool(tool, move.helm)).rejects.toThrow(`with "${manager}"`);
          expect(await installed()).toEqual(objects);
          expect((await deployment()).metadata.labels["app.kubernetes.io/managed-by"]).toBe(
            "kustomize",
          );
        }
        for (const args of older ? move.olderHelm : []) await runTool("kubectl", args);
        const helm = older ? move.helm.filter((a) => a !== "--take-ownership") : move.helm;
        await runTool(tool, tool === "helm4" ? [...helm, ...move.helm4Extra] : helm);
        for (const args of move.kubectl) await runTool("kubectl", args);

        // The roll: the kustomize pod stops (releasing the Lease), the chart's starts.
        expect(await running.stop()).toBe(0);
        running = await operator("helm-0");

        const status = JSON.parse(
          (await runTool(tool, ["status", RELEASE, "-n", namespace, "-o", "json"])).stdout,
        ) as { info: { status: string } };
        expect(status.info.status).toBe("deployed");
        // The Deployment is the chart's: its labels, and no variable of the overlay left.
        const manifest = parseObjects(
          (await runTool(tool, ["get", "manifest", RELEASE, "-n", namespace])).stdout,
        );
        const rendered = manifest.find((o) => o.kind === "Deployment") as unknown as Deployment;
        const moved = await deployment();
        expect(moved.metadata.labels).toEqual(rendered.metadata.labels);
        expect(moved.metadata.annotations).toMatchObject({
          "meta.helm.sh/release-name": RELEASE,
          "meta.helm.sh/release-namespace": namespace,
        });
        expect(moved.spec.template.metadata.labels).toEqual(rendered.spec.template.metadata.labels);
        const movedPods = await eventually(() => podsOf(moved));
        expect(movedPods.filter((p) => kustomizedPods.includes(p))).toEqual([]);
        const env = (d: Deployment) => d.spec.template.spec.containers[0]?.env.map((e) => e.name);
        expect(env(kustomized)).toContain("AIDC_SERVICE_BASE_URL");
        expect(env(moved)).toEqual(env(rendered));
        expect(moved.spec.template.spec.containers[0]?.image).toBe(
          kustomized.spec.template.spec.containers[0]?.image,
        );
        // Every object of the install is still there: CRDs and Namespace included.
        expect(await installed()).toEqual(objects);

        // The chart's operator leads on the same Lease and reconciles.
        await eventually(async () => {
          const lease = await admin
            .makeApiClient(k8s.CoordinationV1Api)
            .readNamespacedLease({ namespace, name: `${RELEASE}-leader` });
          return lease.spec?.holderIdentity?.startsWith("helm-0");
        }, 30_000);
        expect(await readyId(namespace, "first")).toBe(firstId);

        // A later upgrade, the documented one, works and changes the Deployment.
        await runTool(tool, [
          ...documentedHelmUpgrade(RELEASE, namespace),
          ...setArgs({ replicas: 3 }),
        ]);
        const upgraded = await deployment();
        expect(upgraded.spec.replicas).toBe(3);
        await eventually(() => podsOf(upgraded));

        await createNas(namespace, "second");
        const secondId = await readyId(namespace, "second");
        expect(secondId).not.toBe(firstId);
        // In the service, since the move: the second volume's create, nothing deleted.
        // (Other files' leftover objects, reconciled too, are told apart by name and id.)
        const ours = emulator.requestLog
          .read({ since })
          .filter((e) =>
            [namespace, firstId, secondId].some(
              (s) => e.path.includes(s) || JSON.stringify(e.body ?? "").includes(s),
            ),
          );
        const created = ours
          .filter((e) => e.endpoint === "subscribeNas")
          .map((e) => (e.body as { storageParams?: { name?: string } }).storageParams?.name);
        expect(created).toEqual([`second-${namespace}`]);
        expect(ours.filter((e) => e.method === "DELETE")).toEqual([]);
        expect(await readyId(namespace, "first")).toBe(firstId);
      } finally {
        // Deleted while an operator runs: it removes the finalizers (Orphan: nothing remote).
        for (const name of ["first", "second"]) {
          await custom
            .deleteNamespacedCustomObject({ ...NAS, namespace, name })
            .catch(() => undefined);
        }
        await eventually(
          async () =>
            (
              (await custom.listNamespacedCustomObject({ ...NAS, namespace })) as {
                items: unknown[];
              }
            ).items.length === 0,
          30_000,
        ).catch(() => undefined);
        await running.stop();
        await emulator.stop();
        // The release's cluster-scoped objects (fixed names) go before the next case.
        await runTool(tool, ["uninstall", RELEASE, "-n", namespace, "--no-hooks"]).catch(
          () => undefined,
        );
        await runTool("kubectl", [
          ...["delete", "clusterrole,clusterrolebinding", "-l"],
          `app.kubernetes.io/instance=${RELEASE},app.kubernetes.io/component=operator`,
        ]).catch(() => undefined);
        await runTool("kubectl", ["delete", "namespace", namespace, "--wait=false"]).catch(
          () => undefined,
        );
      }
    },
  );
});
