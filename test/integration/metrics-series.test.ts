import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { nasVolumeCrd } from "../../src/crds/nasvolume.js";
import { type RunningEmulator, startEmulator } from "../../src/emulator/server.js";
import { KubeClient } from "../../src/runtime/kube.js";
import {
  type ChartQuery,
  dashboardQueries,
  missingSeries,
  renderedRuleGroups,
  ruleQueries,
} from "../support/chart-monitoring.js";
import { installCrds } from "../support/crds.js";
import { adminKubeConfig, createNamespace, eventually } from "../support/kube.js";
import { ObjectsOf } from "../support/managed.js";
import { TEST_API_KEY } from "../support/operator.js";
import { samples, sumOf } from "../support/prometheus.js";
import { runInProcess } from "../support/run-operator.js";

/**
 * The operator as `aidc-operator run` wires it (every controller, leader election, the
 * metrics server), against the control plane and the emulator, scraped the way
 * Prometheus scrapes it: every series the chart's alerts and dashboard query must be
 * there with the labels they use, so that renaming a metric or a label fails here.
 */
describe("the operator's metrics, as the chart's alerts and dashboard read them", () => {
  const kc = adminKubeConfig();
  let emulator: RunningEmulator;
  let dir = "";
  let queries: ChartQuery[] = [];

  beforeAll(async () => {
    await installCrds(kc);
    emulator = await startEmulator({ apiKey: TEST_API_KEY, subscriptionDelayMs: 200 });
    dir = await mkdtemp(join(tmpdir(), "aidc-metrics-"));
    const groups = await renderedRuleGroups();
    queries = [...ruleQueries(groups), ...dashboardQueries()];
  });
  afterAll(async () => {
    await emulator?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("serves every series the alerts and the dashboard query, and counts a Ready and a Stalled NasVolume", async () => {
    expect(queries.length).toBeGreaterThan(20);
    const namespace = await createNamespace(kc, "metrics-series");
    const keyFile = join(dir, "api-key");
    await writeFile(keyFile, TEST_API_KEY);
    const configFile = join(dir, "config.json");
    await writeFile(
      configFile,
      JSON.stringify({
        service: { baseUrl: emulator.url, allowInsecureHttp: true, apiKeyFile: keyFile },
        watchNamespaces: [namespace],
        pollIntervalMs: { default: 500 },
        backoff: { baseMs: 100, maxMs: 1_000 },
        leaderElection: { enabled: true, leaseName: "metrics-series", leaseNamespace: namespace },
        server: { port: 0, host: "127.0.0.1" },
        log: { level: "silent" },
      }),
    );
    const op = await runInProcess(configFile);
    try {
      await eventually(async () => op.manager.running);
      const scrape = op.metrics;
      const nas = new ObjectsOf(new KubeClient(kc), nasVolumeCrd, namespace);
      await nas.create("ready", { productCode: "nas.capacity.standard", capacityGB: 100 });
      await nas.create("stalled", { productCode: "nas.no.such.product", capacityGB: 100 });
      await nas.waitForCondition("ready", "Ready", "True", undefined, 30_000);
      await nas.waitForCondition("stalled", "Stalled", "True", undefined, 30_000);

      const text = await eventually(async () => {
        const t = await scrape();
        return missingSeries(queries, t).length === 0 ? t : undefined;
      }, 30_000).catch(async () => {
        // Say what is missing rather than that the wait timed out.
        expect(missingSeries(queries, await scrape())).toEqual([]);
        return "";
      });

      const nasRows = samples(text, "aidc_managed_resources").filter(
        (s) => s.labels.kind === "NasVolume",
      );
      expect(nasRows).toContainEqual({
        name: "aidc_managed_resources",
        labels: expect.objectContaining({ connection: "_default", ready: "True", state: "Ok" }),
        value: 1,
      });
      expect(nasRows).toContainEqual({
        name: "aidc_managed_resources",
        labels: expect.objectContaining({ ready: "False", state: "Terminal" }),
        value: 1,
      });
      expect(sumOf(text, "aidc_managed_resources", { kind: "NasVolume" })).toBe(2);
      expect(sumOf(text, "aidc_resource_first_ready_seconds_count", { kind: "NasVolume" })).toBe(1);
      expect(sumOf(text, "leader_election_master_status", { name: "metrics-series" })).toBe(1);
    } finally {
      expect(await op.stop()).toBe(0);
    }
  });

  it("finds a renamed metric and a renamed label in a scrape (the check can fail)", async () => {
    const text = [
      "# TYPE aidc_managed_resources_total gauge",
      'aidc_managed_resources_total{kind="NasVolume",connection="_default",ready="True",synced="True",reason="Available",state="Ok"} 1',
      'aidc_managed_resources_oldest_waiting_seconds{type="NasVolume"} 0',
    ].join("\n");
    const problems = missingSeries(
      [
        { where: "a", expr: 'sum by (kind) (aidc_managed_resources{state="Terminal"})' },
        { where: "b", expr: "max by (kind) (aidc_managed_resources_oldest_waiting_seconds)" },
        { where: "c", expr: "absent(up == 1)" },
      ],
      text,
    );
    expect(problems).toEqual([
      "a: no series aidc_managed_resources",
      "b: no series aidc_managed_resources_oldest_waiting_seconds with labels kind",
    ]);
  });
});
