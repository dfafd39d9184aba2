/**
 * The flags of the measuring scripts (`npm run bench`, `npm run chaos`,
 * `npm run path-files`, compare-builds.ts), as their parseArgs options: apart from the scripts so that
 * test/unit/docs-commands.test.ts reads them without running one.
 */
import type { ParseArgsConfig } from "node:util";

type Flags = NonNullable<ParseArgsConfig["options"]>;

/** The flags of `npm run bench` (bench.ts). */
export const BENCH_FLAGS = {
  n: { type: "string" },
  "idle-seconds": { type: "string" },
  "jobs-use-nas": { type: "boolean" },
  concurrency: { type: "string" },
  "create-concurrency": { type: "string" },
  "poll-interval-ms": { type: "string" },
  "baseline-poll-ms": { type: "string" },
  "timeout-seconds": { type: "string" },
  "skip-baseline": { type: "boolean" },
  "skip-reference": { type: "boolean" },
  "skip-connections": { type: "boolean" },
  "only-connections": { type: "boolean" },
  "connections-n": { type: "string" },
  "skip-fairness": { type: "boolean" },
  "only-fairness": { type: "boolean" },
  "fairness-backlog": { type: "string" },
  "fairness-batches": { type: "string" },
  "only-absence": { type: "boolean" },
  "operator-config": { type: "string" },
  "max-old-space-mib": { type: "string" },
  "max-semi-space-mib": { type: "string" },
  compiled: { type: "boolean" },
  "cpu-prof-dir": { type: "string" },
  "heap-snapshot-dir": { type: "string" },
  "node-args": { type: "string" },
  probes: { type: "string" },
  "small-n": { type: "string" },
} satisfies Flags;

/** The flags of `npm run chaos` (test/chaos/chaos.ts). */
export const CHAOS_FLAGS = {
  n: { type: "string" },
  nas: { type: "string" },
  jobs: { type: "string" },
  fs: { type: "string" },
  bv: { type: "string" },
  templates: { type: "string" },
  cci: { type: "string" },
  kills: { type: "string" },
  seed: { type: "string" },
  "error-rate": { type: "string" },
  "create-error-rate": { type: "string" },
  "lost-create-rate": { type: "string" },
  observed: { type: "string" },
  "delete-share": { type: "string" },
  "second-account-share": { type: "string" },
  "visibility-window-ms": { type: "string" },
  "latency-ms": { type: "string" },
  "latency-rate": { type: "string" },
  "kill-min-ms": { type: "string" },
  "kill-max-ms": { type: "string" },
  "settle-seconds": { type: "string" },
  "poll-interval-ms": { type: "string" },
  "subscription-delay-ms": { type: "string" },
  "no-apiserver-restart": { type: "boolean" },
  "repeat-delete-status": { type: "string" },
  replicas: { type: "string" },
  "pause-leader": { type: "boolean" },
  "emulator-mode": { type: "string" },
  "emulator-config": { type: "string" },
  fault: { type: "string", multiple: true },
  "steer-share": { type: "string" },
  "webhook-share": { type: "string" },
} satisfies Flags;

/** The flags of compare-builds.ts. */
export const COMPARE_BUILDS_FLAGS = {
  build: { type: "string", multiple: true },
  n: { type: "string", default: "200" },
  rounds: { type: "string", default: "2" },
  "idle-seconds": { type: "string", default: "5" },
  "cpu-prof-dir": { type: "string" },
  "operator-config": { type: "string" },
} satisfies Flags;

/** The flags of `npm run path-files` (path-files.ts). */
export const PATH_FILES_FLAGS = {
  kubeconfig: { type: "string" },
  warmup: { type: "string", default: "1" },
  "idle-ms": { type: "string", default: "3000" },
  json: { type: "string" },
  functions: { type: "boolean", default: false },
} satisfies Flags;
