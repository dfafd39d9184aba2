import { copyFile, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { root } from "../../scripts/generated-files.js";
import { CHART_DIR, helmTemplate, parseObjects, runTool } from "../support/chart.js";
import {
  ALERT_TESTS,
  alertTestCoverage,
  type RuleGroup,
  renderedRuleGroups,
} from "../support/chart-monitoring.js";
import { adminKubeConfig, createNamespace } from "../support/kube.js";
import { promtool } from "../support/promtool.js";

const alertsOf = (groups: readonly RuleGroup[]) => groups.flatMap((g) => g.rules);

describe("the chart's alerts and dashboard", () => {
  let dir = "";
  let groups: RuleGroup[] = [];

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "aidc-rules-"));
    groups = await renderedRuleGroups();
  });
  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("renders neither by default, and both when asked: the dashboard ConfigMap as the sidecar finds it, valid for the API server", async () => {
    const plain = parseObjects(await helmTemplate("r", "ns"));
    expect(plain.filter((o) => o.kind === "PrometheusRule")).toEqual([]);
    expect(plain.filter((o) => o.metadata.name.endsWith("-dashboard"))).toEqual([]);

    const namespace = await createNamespace(adminKubeConfig(), "dashboards");
    const rendered = await helmTemplate("r", namespace, {
      "prometheusRule.enabled": true,
      "dashboards.enabled": true,
    });
    const objects = parseObjects(rendered);
    const [rule] = objects.filter((o) => o.kind === "PrometheusRule");
    expect(rule).toMatchObject({
      apiVersion: "monitoring.coreos.com/v1",
      metadata: { name: "r-aidc-operator", namespace },
    });
    const dashboard = objects.find((o) => o.metadata.name === "r-aidc-operator-dashboard");
    expect(dashboard?.kind).toBe("ConfigMap");
    expect(dashboard?.metadata.labels).toMatchObject({ grafana_dashboard: "1" });
    const json =
      (dashboard?.data as Record<string, string> | undefined)?.["aidc-operator.json"] ?? "";
    const source = await readFile(join(root, CHART_DIR, "files/dashboard.json"), "utf8");
    expect(JSON.parse(json)).toEqual(JSON.parse(source));
    const { stdout } = await runTool(
      "kubectl",
      ["apply", "--server-side", "--dry-run=server", "-f", "-"],
      stringify(dashboard),
    );
    expect(stdout).toContain("configmap/r-aidc-operator-dashboard serverside-applied");
  });

  it("passes promtool check rules as rendered", async () => {
    await writeFile(join(dir, "rules.yaml"), stringify({ groups }));
    const run = promtool(["check", "rules", "rules.yaml"], dir);
    expect(run.output).toContain(`SUCCESS: ${alertsOf(groups).length} rules found`);
    expect(run.status).toBe(0);
  });

  it("passes the promtool unit tests, which make each alert fire once and stay silent once", async () => {
    // promtool compares annotations exactly: the tests state the summary (its templating
    // of labels and values); the other annotations are prose that check rules parses.
    const summaries = groups.map((g) => ({
      ...g,
      rules: g.rules.map((r) => ({ ...r, annotations: { summary: r.annotations?.summary ?? "" } })),
    }));
    await writeFile(join(dir, "rules.yaml"), stringify({ groups: summaries }));
    await copyFile(ALERT_TESTS, join(dir, "alerts.test.yaml"));
    const run = promtool(["test", "rules", "alerts.test.yaml"], dir);
    expect(run.output).toContain("SUCCESS");
    expect(run.status).toBe(0);

    const coverage = alertTestCoverage();
    for (const rule of alertsOf(groups)) {
      expect({ alert: rule.alert, ...coverage.get(rule.alert) }).toEqual({
        alert: rule.alert,
        fires: true,
        silent: true,
      });
    }
    expect([...coverage.keys()].sort()).toEqual(
      alertsOf(groups)
        .map((r) => r.alert)
        .sort(),
    );
  });

  it("gives every alert a severity, a summary, a description and a runbook", () => {
    for (const rule of alertsOf(groups)) {
      expect(rule.labels?.severity, rule.alert).toMatch(/^(critical|warning)$/);
      for (const key of ["summary", "description", "runbook"]) {
        expect(rule.annotations?.[key], `${rule.alert} ${key}`).toBeTruthy();
      }
    }
  });

  it("fills in the thresholds and the selector, adds labels and runbook URLs, and leaves out disabled alerts and NoLeader without leader election", async () => {
    const defaults = Object.fromEntries(alertsOf(groups).map((r) => [r.alert, r]));
    expect(defaults.AidcOperatorReconcileErrors?.expr).toContain(
      'controller_runtime_reconcile_errors_total{job="aidc-operator-metrics", namespace="aidc-system"}',
    );
    expect(defaults.AidcObjectsNotReady?.expr).toMatch(/> 30 \* 60$/);
    expect(defaults.AidcObjectsStalled?.for).toBe("15m");
    expect(JSON.stringify(groups)).not.toMatch(/\$\{/);

    const custom = alertsOf(
      await renderedRuleGroups({
        "prometheusRule.thresholds.notReadyMinutes": 90,
        "prometheusRule.thresholds.stalledFor": "1h",
        "prometheusRule.selector": 'job="ops"',
        "prometheusRule.alertLabels.team": "platform",
        "prometheusRule.runbookBaseUrl": "https://runbooks.example.com/aidc",
        "prometheusRule.disabledAlerts[0]": "AidcOperatorWorkqueueDepth",
        "leaderElection.enabled": false,
        replicas: 1,
      }),
    );
    const byName = Object.fromEntries(custom.map((r) => [r.alert, r]));
    expect(byName.AidcObjectsNotReady?.expr).toContain(
      'aidc_managed_resources_oldest_waiting_seconds{job="ops"}',
    );
    expect(byName.AidcObjectsNotReady?.expr).toMatch(/> 90 \* 60$/);
    expect(byName.AidcObjectsStalled?.for).toBe("1h");
    expect(byName.AidcObjectsStalled?.labels).toEqual({ severity: "warning", team: "platform" });
    expect(byName.AidcServiceSlow?.annotations?.runbook_url).toBe(
      "https://runbooks.example.com/aidc#aidcserviceslow",
    );
    expect(byName.AidcOperatorWorkqueueDepth).toBeUndefined();
    expect(byName.AidcOperatorNoLeader).toBeUndefined();
    expect(custom).toHaveLength(alertsOf(groups).length - 2);
  });

  it("refuses a threshold it does not know and one of the wrong type, naming it", async () => {
    await expect(
      helmTemplate("r", "ns", {
        "prometheusRule.enabled": true,
        "prometheusRule.thresholds.typo": 1,
      }),
    ).rejects.toThrow(/additional properties 'typo' not allowed/);
    await expect(
      helmTemplate("r", "ns", {
        "prometheusRule.enabled": true,
        "prometheusRule.thresholds.stalledFor": "soon",
      }),
    ).rejects.toThrow(/stalledFor/);
  });

  it("refuses to leave out an alert it does not have, naming those it has", async () => {
    await expect(
      helmTemplate("r", "ns", {
        "prometheusRule.enabled": true,
        "prometheusRule.disabledAlerts[0]": "AidcOperatorWorkqueDepth",
      }),
    ).rejects.toThrow(
      /prometheusRule.disabledAlerts: AidcOperatorWorkqueDepth is no alert of the chart \(AidcOperatorDown, .*AidcOperatorWorkqueueDepth/,
    );
  });
});
