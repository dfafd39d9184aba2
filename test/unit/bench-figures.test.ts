import { describe, expect, it } from "vitest";
import { RuntimeMetrics } from "../../src/runtime/metrics.js";
import { histogramP50 } from "../bench/fairness-probe.js";
import { percentile } from "../bench/ready-tracker.js";
import { writesBetween } from "../support/apiserver-writes.js";
import { processStats } from "../support/operator-process.js";
import { samples, sumBy, sumOf } from "../support/prometheus.js";

const METRICS = `# HELP controller_runtime_reconcile_total Total reconciles.
# TYPE controller_runtime_reconcile_total counter
controller_runtime_reconcile_total{controller="nasvolume",result="success"} 12
controller_runtime_reconcile_total{controller="nasvolume",result="requeue_after"} 30
controller_runtime_reconcile_total{controller="trainingjob",result="error"} 2
controller_runtime_reconcile_total_extra{controller="nasvolume"} 1000
apiserver_request_total{code="200",group="aidc.io",resource="nasvolumes",subresource="status",verb="PATCH"} 7
`;

describe("the benchmark's figures", () => {
  it("percentiles use the nearest rank, and an empty set has none", () => {
    const v = [5, 1, 4, 2, 3, 6, 7, 8, 9, 10];
    expect(percentile(v, 50)).toBe(5);
    expect(percentile(v, 95)).toBe(10);
    expect(percentile(v, 0)).toBe(1);
    expect(percentile([], 50)).toBeNaN();
  });

  it("sums a metric by label, ignoring metrics whose name only starts the same", () => {
    expect(sumOf(METRICS, "controller_runtime_reconcile_total")).toBe(44);
    expect(sumOf(METRICS, "controller_runtime_reconcile_total", { controller: "nasvolume" })).toBe(
      42,
    );
    expect(sumBy(METRICS, "controller_runtime_reconcile_total", "controller")).toEqual({
      nasvolume: 42,
      trainingjob: 2,
    });
    expect(samples(METRICS, "apiserver_request_total")[0]?.labels).toMatchObject({
      group: "aidc.io",
      subresource: "status",
      verb: "PATCH",
    });
  });

  it("the writes between two readings are the differences, zero ones left out", () => {
    expect(
      writesBetween(
        { total: 5, byResource: { nasvolumes: 3, "nasvolumes/status": 2 }, refused: 1 },
        {
          total: 9,
          byResource: { nasvolumes: 3, "nasvolumes/status": 5, trainingjobs: 1 },
          refused: 2,
        },
      ),
    ).toEqual({ total: 4, byResource: { "nasvolumes/status": 3, trainingjobs: 1 }, refused: 1 });
  });

  it("reads peak RSS and CPU time of a live process from /proc, and nothing of a gone one", async () => {
    const own = await processStats(process.pid);
    expect(own?.peakRssMiB).toBeGreaterThan(10);
    expect(own?.rssMiB).toBeLessThanOrEqual(own?.peakRssMiB ?? 0);
    expect(own?.cpuSeconds).toBeGreaterThan(0);
    expect(await processStats(2 ** 22 + 17)).toBeUndefined();
  });

  it("the operator's request latency p50 between two scrapes counts only the requests between them", async () => {
    const metrics = new RuntimeMetrics({ processMetrics: false });
    const { latency } = metrics.kubeRequestMetrics("api", "requests");
    const kube = (method: string, durationMs: number) =>
      latency.observe({ verb: method, host: "api" }, durationMs / 1000);
    for (let i = 0; i < 10; i++) kube("PATCH", 8);
    const before = await metrics.text();
    // Between the scrapes: PATCHes of 40 ms (the 30–50 ms bucket) and GETs that do not count.
    for (let i = 0; i < 10; i++) kube("PATCH", 40);
    for (let i = 0; i < 30; i++) kube("GET", 2);
    const after = await metrics.text();
    const name = "rest_client_request_duration_seconds";
    const patches = (l: Record<string, string>) => l.verb === "PATCH";
    const p50 = histogramP50(before, after, name, patches);
    expect(p50).toBeGreaterThan(0.03);
    expect(p50).toBeLessThanOrEqual(0.05);
    expect(histogramP50(after, after, name, patches)).toBeNaN();
  });
});
