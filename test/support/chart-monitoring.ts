/**
 * The chart's alerts and dashboard as the tests read them: the rules as helm renders
 * them, the dashboard's queries, the promtool unit tests of test/prometheus/, and the
 * check that a scrape of the operator has every series they query.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parse } from "yaml";
import { root } from "../../scripts/generated-files.js";
import { CHART_DIR, helmTemplate, parseObjects } from "./chart.js";
import { seriesUsedBy } from "./promtool.js";

/** One PromQL expression of the chart's alerts or dashboard, with where it comes from. */
export interface ChartQuery {
  where: string;
  expr: string;
}

/** A rule group of a PrometheusRule. */
export interface RuleGroup {
  name: string;
  rules: {
    alert: string;
    expr: string;
    for?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  }[];
}

/** The rule groups of the chart's PrometheusRule, rendered by helm with `values`. */
export async function renderedRuleGroups(
  values: Record<string, string | number | boolean> = {},
  release = "aidc-operator",
  namespace = "aidc-system",
): Promise<RuleGroup[]> {
  const objects = parseObjects(
    await helmTemplate(release, namespace, { "prometheusRule.enabled": true, ...values }),
  );
  const rule = objects.find((o) => o.kind === "PrometheusRule");
  if (!rule) throw new Error("the chart rendered no PrometheusRule");
  return (rule.spec as { groups: RuleGroup[] }).groups;
}

/** The alert expressions of rendered rule groups. */
export function ruleQueries(groups: readonly RuleGroup[]): ChartQuery[] {
  return groups.flatMap((g) => g.rules.map((r) => ({ where: `alert ${r.alert}`, expr: r.expr })));
}

/** Values for the dashboard's Grafana variables, so that its queries parse as PromQL. */
const GRAFANA_VARIABLES: Record<string, string> = {
  __rate_interval: "5m",
  namespace: "aidc-system",
  job: ".+",
};

/** The queries of the chart's dashboard (files/dashboard.json), Grafana variables filled in. */
export function dashboardQueries(
  text = readFileSync(join(root, CHART_DIR, "files/dashboard.json"), "utf8"),
): ChartQuery[] {
  const dashboard = JSON.parse(text) as {
    panels: { title: string; targets?: { expr?: string }[] }[];
  };
  return dashboard.panels.flatMap((p) =>
    (p.targets ?? []).flatMap((t) =>
      t.expr
        ? [
            {
              where: `panel "${p.title}"`,
              expr: t.expr.replace(
                /\$(\w+)/g,
                (all, name: string) => GRAFANA_VARIABLES[name] ?? all,
              ),
            },
          ]
        : [],
    ),
  );
}

/** Labels Prometheus adds when it scrapes (target labels), and `le` of histogram buckets is served. */
export const SCRAPE_LABELS = new Set([
  "job",
  "namespace",
  "pod",
  "instance",
  "service",
  "endpoint",
  "container",
]);
/** Series Prometheus makes itself, not the operator. */
export const PROMETHEUS_SERIES = new Set(["up"]);

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+\S+/;
const LABEL_NAME = /([a-zA-Z_][a-zA-Z0-9_]*)="(?:[^"\\]|\\.)*"/g;

/** Each metric of a text exposition with the label-name sets of its samples. */
export function scrapedSeries(text: string): Map<string, string[][]> {
  const out = new Map<string, string[][]>();
  for (const line of text.split("\n")) {
    const m = SAMPLE.exec(line);
    if (!m || line.startsWith("#")) continue;
    const names = [...(m[2] ?? "").matchAll(LABEL_NAME)].map((l) => l[1] as string);
    const list = out.get(m[1] as string) ?? [];
    list.push(names);
    out.set(m[1] as string, list);
  }
  return out;
}

/**
 * What the queries read that the scrape `text` does not have: one line per series a
 * query reads whose metric has no sample, or no sample carrying every label the query
 * needs (labels Prometheus adds at scrape time aside). Empty when all is there.
 */
export function missingSeries(queries: readonly ChartQuery[], text: string): string[] {
  const scraped = scrapedSeries(text);
  const uses = seriesUsedBy(queries.map((q) => q.expr));
  const problems: string[] = [];
  queries.forEach((q, i) => {
    for (const use of uses[i] ?? []) {
      if (!use.metric || PROMETHEUS_SERIES.has(use.metric)) continue;
      const samples = scraped.get(use.metric);
      const needed = use.labels.filter((l) => !SCRAPE_LABELS.has(l));
      if (!samples) {
        problems.push(`${q.where}: no series ${use.metric}`);
      } else if (!samples.some((s) => needed.every((l) => s.includes(l)))) {
        problems.push(`${q.where}: no series ${use.metric} with labels ${needed.join(", ")}`);
      }
    }
  });
  return problems;
}

/** The promtool unit tests of the alerts (test/prometheus/alerts.test.yaml), as text. */
export const ALERT_TESTS = join(root, "test/prometheus/alerts.test.yaml");

/** Per alert: whether the unit tests have a case where it fires and one where it does not. */
export function alertTestCoverage(
  text = readFileSync(ALERT_TESTS, "utf8"),
): Map<string, { fires: boolean; silent: boolean }> {
  const doc = parse(text) as {
    tests: { alert_rule_test?: { alertname: string; exp_alerts?: unknown[] }[] }[];
  };
  const out = new Map<string, { fires: boolean; silent: boolean }>();
  for (const t of doc.tests) {
    for (const a of t.alert_rule_test ?? []) {
      const seen = out.get(a.alertname) ?? { fires: false, silent: false };
      if ((a.exp_alerts ?? []).length > 0) seen.fires = true;
      else seen.silent = true;
      out.set(a.alertname, seen);
    }
  }
  return out;
}
