import type { TestProject } from "vitest/node";
import { controlPlaneBinaries } from "../../src/controlplane/binaries.js";
import { LocalControlPlane } from "../../src/controlplane/controlplane.js";
import { minioBinary } from "../../src/controlplane/s3-server.js";
import { kstatusBinary } from "./kstatus.js";
import { promtoolDir } from "./promtool.js";

declare module "vitest" {
  export interface ProvidedContext {
    kubeconfigPath: string;
    apiServer: string;
  }
}

/**
 * Starts one real control plane for the integration project and provides its
 * kubeconfig to the tests. It never skips: when the plane cannot start, the run fails.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  // Built (and cached) before any test runs, so that no test waits for the Go build.
  kstatusBinary();
  // So are promtool and promql-selectors of the chart's alert tests (tools/promtool/build.sh).
  promtoolDir();
  // So is the S3 server of the Bucket tests (tools/minio/build.sh).
  await minioBinary((line) => console.log(line));
  // So is the oldest Kubernetes the chart supports (kube-floor.test.ts).
  await controlPlaneBinaries({
    kubernetes: "kubernetes-floor",
    onProgress: (line) => console.log(line),
  });
  const plane = new LocalControlPlane();
  const started = Date.now();
  await plane.start();
  const version = await plane.version();
  console.log(
    `[integration] kube-apiserver ${version} at ${plane.server} (ready in ${Date.now() - started} ms)`,
  );
  project.provide("kubeconfigPath", plane.kubeconfigPath);
  project.provide("apiServer", plane.server);
  return async () => {
    await plane.stop();
  };
}
