import { readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as k8s from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { EmulatorAdmin } from "../../src/emulator/admin-client.js";
import { type RunningEmulator, startEmulator } from "../../src/emulator/server.js";
import {
  CHART_DIR,
  CHART_TEST_BASE_URL,
  canI,
  helmUninstall,
  installChartCrds,
  operatorKubeConfigFor,
  randomSuffix,
  runTool,
  type ServiceAccountRef,
  setArgs,
} from "../support/chart.js";
import { type InstalledOperator, startInstalledOperator } from "../support/chart-operator.js";
import { adminKubeConfig, createNamespace, deleteNamespace, eventually } from "../support/kube.js";
import { kustomizedSamples } from "../support/samples.js";

/**
 * Issue 9's proof of least privilege in use: the chart is installed with `helm install`,
 * and the operator (runOperator, leader election on the chart's Lease, the chart's
 * rendered config file) runs with a kubeconfig that impersonates the chart's
 * ServiceAccount, so every call it makes gets exactly the chart's RBAC. The samples of
 * deploy/samples, applied by an admin, must all become Ready=True for their current
 * generation, and no request of the operator may be refused: a rule a controller uses
 * without declaring it (so the generated RBAC lacks it) fails here. The last test removes one rule from the
 * installed ClusterRole and sees the operator refused, so that the first can fail.
 */

const API_KEY = "chart-e2e-key-0123456789abcdef";
const SAMPLES = "deploy/samples";
/** One object per file the samples' kustomization lists. */
const SAMPLE_COUNT = (
  parse(readFileSync(join(SAMPLES, "kustomization.yaml"), "utf8")) as { resources: string[] }
).resources.length;
/** Minimal shape of a sample as `kubectl get -o json` returns it. */
interface SampleObject {
  kind: string;
  metadata: { name: string; generation?: number };
  status?: {
    conditions?: { type: string; status: string; observedGeneration?: number; message?: string }[];
  };
}

/** A log line that records a refusal by the API server (403 Forbidden). */
const FORBIDDEN = /forbidden|"(?:status)?code":\s*403\b/i;

/** One installed release and an operator running as its ServiceAccount. */
interface ChartOperator extends InstalledOperator {
  release: string;
  namespace: string;
  serviceAccount: ServiceAccountRef;
}

/** `helm install` of the chart as `release` into `namespace`, with the API-key Secret. */
async function installRelease(
  release: string,
  namespace: string,
  values: Record<string, string>,
): Promise<ServiceAccountRef> {
  const core = adminKubeConfig().makeApiClient(k8s.CoreV1Api);
  await core.createNamespacedSecret({
    namespace,
    body: { metadata: { name: "service-api-key" }, stringData: { apiKey: API_KEY } },
  });
  await runTool("helm", [
    "install",
    release,
    CHART_DIR,
    "--namespace",
    namespace,
    ...setArgs({
      apiKeySecret: "service-api-key",
      "service.baseUrl": CHART_TEST_BASE_URL,
      ...values,
    }),
  ]);
  return { namespace, name: `${release}-aidc-operator` };
}

/** The operator of a release, as its pod runs it (test/support/chart-operator.ts). */
async function startChartOperator(
  release: string,
  namespace: string,
  serviceAccount: ServiceAccountRef,
  emulator: RunningEmulator,
  dir: string,
): Promise<ChartOperator> {
  const op = await startInstalledOperator({
    fullname: `${release}-aidc-operator`,
    namespace,
    serviceAccount,
    apiKeySecret: "service-api-key",
    serviceUrl: emulator.url,
    podName: `${release}-0`,
    dir,
  });
  return { ...op, release, namespace, serviceAccount };
}

/** The samples in `namespace` as the API server has them. */
async function samplesIn(namespace: string): Promise<SampleObject[]> {
  const { stdout } = await runTool("kubectl", [
    "get",
    "-k",
    SAMPLES,
    "-n",
    namespace,
    "-o",
    "json",
  ]);
  return (JSON.parse(stdout) as { items: SampleObject[] }).items;
}

/** Why `obj` is not Ready for its current generation; undefined when it is. */
function notReady(obj: SampleObject): string | undefined {
  const ready = obj.status?.conditions?.find((c) => c.type === "Ready");
  if (ready?.status === "True" && ready.observedGeneration === obj.metadata.generation) {
    return undefined;
  }
  return `${obj.kind}/${obj.metadata.name}: Ready=${ready?.status ?? "none"} (generation ${obj.metadata.generation}, observed ${ready?.observedGeneration}) ${ready?.message ?? ""}`;
}

/**
 * Waits until every sample in `namespace` is Ready, then checks that the operator's
 * log holds no refusal. A refusal ends the wait early: the test fails with the log lines
 * that name what was refused, or else with the samples that are not Ready.
 */
async function expectReadyAndNothingRefused(
  namespace: string,
  logs: readonly string[],
  timeoutMs = 90_000,
): Promise<void> {
  const refused = () => logs.filter((l) => FORBIDDEN.test(l));
  let last: string[] = [];
  await eventually(
    async () => {
      const objects = await samplesIn(namespace);
      last = objects.map(notReady).filter((m): m is string => m !== undefined);
      return (objects.length === SAMPLE_COUNT && last.length === 0) || refused().length > 0;
    },
    timeoutMs,
    1000,
  ).catch(() => undefined);
  expect(refused(), "requests refused by the API server").toEqual([]);
  expect(last, "samples not Ready").toEqual([]);
}

describe("the operator run as the chart's ServiceAccount", () => {
  const admin = adminKubeConfig();
  const installed: { release: string; namespace: string }[] = [];
  let dir = "";

  beforeAll(async () => {
    await installChartCrds();
    dir = await mkdtemp(join(tmpdir(), "aidc-chart-op-"));
  });

  afterAll(async () => {
    for (const { release, namespace } of installed) {
      await helmUninstall(release, namespace).catch(() => undefined);
    }
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  /**
   * Starts an emulator of its own (the samples' service names are unique per service)
   * and the operator of a release; `stop()` stops both and resolves with the exit code.
   */
  async function startWithEmulator(
    release: string,
    namespace: string,
    sa: ServiceAccountRef,
  ): Promise<ChartOperator> {
    const emulator = await startEmulator({ apiKey: API_KEY, subscriptionDelayMs: 300 });
    // The CciInstance sample binds "notebook-alice". Every emulator numbers it cci-0001,
    // and an operator watching all namespaces of this shared control plane sees other
    // tests' objects bound to cci-0001 (one object per remote id): give this emulator's
    // notebook-alice an id of its own.
    const admin = new EmulatorAdmin(emulator.url);
    await admin.setCciState("cci-0001", { fields: { name: "notebook-alice-elsewhere" } });
    await admin.seed({ cci: [{ id: `cci-${release}`, name: "notebook-alice" }] });
    const op = await startChartOperator(release, namespace, sa, emulator, dir);
    let stopped: Promise<number> | undefined;
    return {
      ...op,
      stop: () => {
        stopped ??= op.stop().finally(() => emulator.stop());
        return stopped;
      },
    };
  }

  describe("watching all namespaces (watchNamespaces empty)", () => {
    let op: ChartOperator;
    let team = "";
    let other = "";

    beforeAll(async () => {
      const namespace = await createNamespace(admin, "chart-op");
      team = await createNamespace(admin, "team");
      // Another namespace's CciInstance naming the sample's instance, older than the
      // sample, as other files of this shared control plane leave them: where it may
      // adopt, it binds the instance first and the sample is refused AlreadyBound.
      other = await createNamespace(admin, "other-team");
      await admin.makeApiClient(k8s.CustomObjectsApi).createNamespacedCustomObject({
        group: "aidc.io",
        version: "v1alpha1",
        plural: "cciinstances",
        namespace: other,
        body: {
          apiVersion: "aidc.io/v1alpha1",
          kind: "CciInstance",
          metadata: { name: "notebook" },
          spec: { name: "notebook-alice" },
        },
      });
      const release = `all-${randomSuffix()}`;
      // Exposure on (the chart default is off), for the TrainingJob sample set to expose
      // its port below. The emulator's open ports answer from 203.0.113.10 (TEST-NET-3):
      // the range is allowed, as an admin enabling exposure sets the gateway network.
      const sa = await installRelease(release, namespace, {
        "exposure.enabled": "true",
        "exposure.allowedCidrs": "{203.0.113.0/24}",
        // The CciInstance sample binds by name: an adoption, allowed in its namespace only.
        "adoption.namespaces[0]": team,
      });
      installed.push({ release, namespace });
      op = await startWithEmulator(release, namespace, sa);
      return async () => {
        // While the operator runs, so that it removes its finalizer.
        await deleteNamespace(admin, other);
        await op.stop();
      };
    });

    it("reconciles every sample to Ready with no request refused", async () => {
      await runTool("kubectl", ["apply", "-n", team, "-k", SAMPLES]);
      // The sample leaves exposePorts off (it works with the default chart as written);
      // turned on, the exposure controller's Service writes are exercised too.
      const job = kustomizedSamples().find((s) => s.kind === "TrainingJob")?.name ?? "";
      await runTool("kubectl", [
        ...["patch", "trainingjob", job, "-n", team, "--type=merge"],
        ...["-p", '{"spec":{"exposePorts":true}}'],
      ]);
      await expectReadyAndNothingRefused(team, op.logs);
      // What the operator writes beside status went through too: Events, and the
      // Service of the TrainingJob sample's exposed port.
      // Both may follow Ready: Events are written in the background, and the Service
      // once the opened port's external address shows in a later poll.
      await eventually(async () => {
        const events = await admin
          .makeApiClient(k8s.EventsV1Api)
          .listNamespacedEvent({ namespace: team });
        return events.items.length > 0;
      });
      await eventually(async () => {
        const services = await admin
          .makeApiClient(k8s.CoreV1Api)
          .listNamespacedService({ namespace: team });
        return services.items.length > 0;
      });
    });

    it("lets the ServiceAccount do everything the running Manager declares, where it watches", async () => {
      const declared = op.manager()?.permissions() ?? [];
      expect(declared.length).toBeGreaterThan(10);
      const denied: string[] = [];
      for (const rule of declared) {
        for (const group of rule.apiGroups) {
          for (const resource of rule.resources) {
            for (const verb of rule.verbs) {
              // Secrets (connections' keys) are granted in the release namespace only.
              const namespace = group === "" && resource === "secrets" ? op.namespace : team;
              const access = { verb, group, resource, namespace };
              if (!(await canI(operatorKubeConfigFor(op.serviceAccount), access))) {
                denied.push(`${verb} ${group || "core"}/${resource}`);
              }
            }
          }
        }
      }
      expect(denied).toEqual([]);
    });

    it("leads on the chart's Lease in the release namespace", async () => {
      const leases = admin.makeApiClient(k8s.CoordinationV1Api);
      const lease = await leases.readNamespacedLease({
        namespace: op.namespace,
        name: `${op.release}-aidc-operator-leader`,
      });
      expect(lease.spec?.holderIdentity).toMatch(new RegExp(`^${op.release}-0_`));
    });

    it("writes the API key into no log line", () => {
      expect(op.logs.length).toBeGreaterThan(10);
      expect(op.logs.filter((l) => l.includes(API_KEY))).toEqual([]);
    });

    it("is refused, and leaves the object not Ready, once a rule is taken out of the ClusterRole", async () => {
      const rbac = admin.makeApiClient(k8s.RbacAuthorizationV1Api);
      const name = `${op.release}-aidc-operator`;
      const role = await rbac.readClusterRole({ name });
      const without = (role.rules ?? []).filter(
        (r) => !(r.apiGroups?.includes("aidc.io") && r.resources?.includes("nasvolumes/status")),
      );
      expect(without.length).toBe((role.rules ?? []).length - 1);
      await rbac.replaceClusterRole({ name, body: { ...role, rules: without } });

      const custom = admin.makeApiClient(k8s.CustomObjectsApi);
      const before = op.logs.length;
      await custom.createNamespacedCustomObject({
        group: "aidc.io",
        version: "v1alpha1",
        plural: "nasvolumes",
        namespace: team,
        body: {
          apiVersion: "aidc.io/v1alpha1",
          kind: "NasVolume",
          metadata: { name: "no-status-rule" },
          spec: { productCode: "nas.capacity.standard", capacityGB: 10, mountPath: "/mnt/x" },
        },
      });
      await eventually(
        async () =>
          op.logs.slice(before).some((l) => FORBIDDEN.test(l) && l.includes("nasvolumes/status")),
        30_000,
      );
      const obj = (await custom.getNamespacedCustomObject({
        group: "aidc.io",
        version: "v1alpha1",
        plural: "nasvolumes",
        namespace: team,
        name: "no-status-rule",
      })) as SampleObject;
      expect(notReady(obj)).toBeDefined();
    });
  });

  describe("watching one namespace (watchNamespaces set)", () => {
    let op: ChartOperator;
    let watched = "";

    beforeAll(async () => {
      const namespace = await createNamespace(admin, "chart-op-scoped");
      watched = await createNamespace(admin, "team-watched");
      const release = `one-${randomSuffix()}`;
      const sa = await installRelease(release, namespace, {
        "watchNamespaces[0]": watched,
        "adoption.namespaces[0]": watched,
      });
      installed.push({ release, namespace });
      op = await startWithEmulator(release, namespace, sa);
      return async () => {
        await op.stop();
      };
    });

    it("reconciles every sample in the watched namespace to Ready with no request refused", async () => {
      await runTool("kubectl", ["apply", "-n", watched, "-k", SAMPLES]);
      await expectReadyAndNothingRefused(watched, op.logs);
    });

    it("stops with exit code 0 and releases the chart's Lease", async () => {
      expect(await op.stop()).toBe(0);
      const lease = await admin.makeApiClient(k8s.CoordinationV1Api).readNamespacedLease({
        namespace: op.namespace,
        name: `${op.release}-aidc-operator-leader`,
      });
      expect(lease.spec?.holderIdentity).toBeUndefined();
    });
  });
});
