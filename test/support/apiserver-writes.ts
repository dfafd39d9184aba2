/**
 * Kubernetes writes counted by the API server itself (`apiserver_request_total` on its
 * /metrics), so that the benchmark counts every write request of the operator,
 * including writes that changed nothing. Counters restart with the API server.
 */
import type * as k8s from "@kubernetes/client-node";
import { kubeRequest } from "./http.js";
import { samples } from "./prometheus.js";

/** The verbs the API server reports for writes. */
const WRITE_VERBS = new Set(["POST", "PUT", "PATCH", "APPLY", "DELETE", "DELETECOLLECTION"]);

/** Write requests by `resource[/subresource]` of one API group, and their total. */
export interface WriteCounts {
  total: number;
  byResource: Record<string, number>;
  /** Of `total`, the ones the API server refused (code >= 400, e.g. 409 Conflict). */
  refused: number;
}

/** Counts write requests to `group` (e.g. `aidc.io`, `events.k8s.io`) since the API server started. */
export async function apiServerWrites(kc: k8s.KubeConfig, group: string): Promise<WriteCounts> {
  const res = await kubeRequest(kc, "GET", "/metrics", { accept: "text/plain" });
  if (res.status !== 200) throw new Error(`GET /metrics of the API server: ${res.status}`);
  const out: WriteCounts = { total: 0, byResource: {}, refused: 0 };
  for (const s of samples(res.body, "apiserver_request_total")) {
    if (s.labels.group !== group || !WRITE_VERBS.has(s.labels.verb ?? "")) continue;
    const key = s.labels.subresource
      ? `${s.labels.resource}/${s.labels.subresource}`
      : (s.labels.resource ?? "");
    out.byResource[key] = (out.byResource[key] ?? 0) + s.value;
    out.total += s.value;
    if (Number(s.labels.code) >= 400) out.refused += s.value;
  }
  return out;
}

/** `after - before`, per resource and in total. */
export function writesBetween(before: WriteCounts, after: WriteCounts): WriteCounts {
  const byResource: Record<string, number> = {};
  for (const [k, v] of Object.entries(after.byResource)) {
    const d = v - (before.byResource[k] ?? 0);
    if (d !== 0) byResource[k] = d;
  }
  return {
    total: after.total - before.total,
    byResource,
    refused: after.refused - before.refused,
  };
}
