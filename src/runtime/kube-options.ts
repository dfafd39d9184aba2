/**
 * What a `KubeClient` (kube.ts) is configured with, the reconcile a view of it is made
 * for, and what it records and reports of each request.
 */

import type { Counter, Histogram } from "prom-client";
import type { FlowRateLimitOptions, SecretRedactor } from "./outbound-guards.js";
import type { KubeObject } from "./resource.js";

/** Options of a `KubeClient`. */
export interface KubeClientOptions {
  /**
   * Client-side rate limit of requests, per flow, and their ceiling. Default
   * `DEFAULT_KUBE_RATE_LIMIT` under `DEFAULT_KUBE_TOTAL_RATE_LIMIT` (defaults.ts).
   */
  rateLimit?: FlowRateLimitOptions;
  /**
   * Requests in flight at once, shared by the flows in turn (default
   * `DEFAULT_KUBE_MAX_IN_FLIGHT`); watches are not counted.
   */
  maxInFlight?: number;
  /** Where each request is recorded (`RuntimeMetrics.kubeRequestMetrics`, metrics.ts). */
  metrics?: KubeRequestMetrics;
  /** Called after every request (tests counting writes or timing requests). */
  onRequest?: (info: KubeRequestInfo) => void;
  /**
   * Replaces registered secrets in every body sent (status, Events, annotations), so
   * that no write puts the API key into the cluster, whatever quoted it.
   */
  redactor?: SecretRedactor;
  /**
   * Remember the resourceVersions this client's writes produce, for
   * `KubeClient.isOwnWrite` (default true). The Event recorder's client, whose
   * writes nobody asks about, keeps none.
   */
  rememberWrites?: boolean;
  /**
   * Asked before each write of a reconcile's view (`forReconcile`): false refuses it
   * unsent, as for an abandoned reconcile. The Lease fence of a leader (outbound-guards.ts).
   */
  mayWrite?: () => boolean;
}

/**
 * The reconcile a request is made for (`KubeClient.forReconcile`): it takes its flow's
 * share of the rate limit, and once its signal is aborted (abandoned at its deadline,
 * controller-keys.ts) nothing more is sent, so it cannot write state computed before
 * the deadline over what a newer reconcile saw.
 */
export interface ReconcileView {
  readonly flow: string;
  readonly signal: AbortSignal;
  /** Set to the object each write answered, by `writtenKey` (kube.ts): the newest known. */
  readonly written?: Map<string, KubeObject>;
}

/** One Kubernetes request as observed by {@link KubeClientOptions.onRequest}. */
export interface KubeRequestInfo {
  method: string;
  /** URL path without the query. */
  path: string;
  /** HTTP status, or 0 when no answer came. */
  code: number;
  durationMs: number;
  /** Time the request waited for the client's rate limit and a seat before it was sent. */
  rateLimitWaitMs: number;
}

/** client-go's rest_client metrics, with the labels one client records its requests under. */
export interface KubeRequestMetrics {
  /** The API server's host. */
  host: string;
  /** The client's rate limiter: `requests`, or `events` for the Events' own. */
  limiter: string;
  requests: Counter<"code" | "method" | "host">;
  latency: Histogram<"verb" | "host">;
  rateLimitWait: Histogram<"verb" | "host" | "limiter">;
}

/** HTTP methods of the Kubernetes API. */
export type KubeMethod = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";

/** Patch content types accepted by `KubeClient.patch`. */
export type PatchType = "merge" | "json";
