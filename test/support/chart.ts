import { execFile } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import * as k8s from "@kubernetes/client-node";
import { inject } from "vitest";
import { parseAllDocuments } from "yaml";
import { RENDER_KUBE_VERSION } from "../../scripts/generate-deploy.js";
import { root } from "../../scripts/generated-files.js";
import { controlPlaneBinaries } from "../../src/controlplane/binaries.js";
import { eventually, impersonatingKubeConfig, kubeCacheDir } from "./kube.js";

const exec = promisify(execFile);

/** The chart, relative to the repository root. */
export const CHART_DIR = "charts/aidc-operator";

/** Helm's own state (cache, config, data) kept out of the user's home. */
const helmHome = mkdtempSync(join(tmpdir(), "aidc-helm-"));

/** What a command printed. */
export interface CommandOutput {
  stdout: string;
  stderr: string;
}

/**
 * Runs helm, helm4 (Helm 4) or kubectl (from the control-plane binaries) against the integration
 * run's control plane, from the repository root. Rejects with the command's stderr
 * when it exits non-zero.
 */
export async function runTool(
  tool: "helm" | "helm4" | "kubectl",
  args: readonly string[],
  input?: string,
): Promise<CommandOutput> {
  const bins = await controlPlaneBinaries();
  const env = {
    ...process.env,
    KUBECONFIG: inject("kubeconfigPath"),
    HELM_CACHE_HOME: join(helmHome, "cache"),
    HELM_CONFIG_HOME: join(helmHome, "config"),
    HELM_DATA_HOME: join(helmHome, "data"),
    KUBECACHEDIR: kubeCacheDir(),
  };
  const child = exec(bins[tool], [...args], {
    cwd: root,
    env,
    maxBuffer: 32 * 1024 * 1024,
    timeout: 120_000,
  });
  if (input !== undefined) {
    child.child.stdin?.end(input);
  }
  try {
    const { stdout, stderr } = await child;
    return { stdout, stderr };
  } catch (err) {
    const e = err as Error & { stderr?: string; stdout?: string };
    throw new Error(`${tool} ${args.join(" ")} failed: ${e.stderr || e.message}`);
  }
}

/**
 * `helm uninstall` of a test release, without the chart's pre-delete hook: the hook's
 * Job runs only where a test kubelet runs the operator's image (test/support/kubelet.ts),
 * so the uninstall would wait for it. test/e2e/uninstall.test.ts tests the hook itself.
 */
export async function helmUninstall(release: string, namespace: string): Promise<void> {
  await runTool("helm", ["uninstall", release, "--namespace", namespace, "--no-hooks"]);
}

/** `--set` arguments from a flat map of value paths. */
export function setArgs(values: Record<string, string | number | boolean> = {}): string[] {
  return Object.entries(values).flatMap(([k, v]) => ["--set", `${k}=${v}`]);
}

/** The service base URL the tests install the chart with (the chart requires one). */
export const CHART_TEST_BASE_URL = "https://aidc.example.com/api";

/**
 * `helm template` of the chart as `release` in `namespace`, with
 * `service.baseUrl` {@link CHART_TEST_BASE_URL} unless `values` sets it.
 */
export async function helmTemplate(
  release: string,
  namespace: string,
  values: Record<string, string | number | boolean> = {},
  extra: readonly string[] = [],
): Promise<string> {
  const { stdout } = await runTool("helm", [
    "template",
    release,
    CHART_DIR,
    "--namespace",
    namespace,
    "--kube-version",
    RENDER_KUBE_VERSION,
    ...setArgs({ "service.baseUrl": CHART_TEST_BASE_URL, ...values }),
    ...extra,
  ]);
  return stdout;
}

/** A Kubernetes object as rendered: enough to find it again. */
export interface RenderedObject {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
  [field: string]: unknown;
}

/** The objects of a multi-document YAML stream (empty documents skipped). */
export function parseObjects(yaml: string): RenderedObject[] {
  return parseAllDocuments(yaml)
    .map((d) => d.toJS() as RenderedObject | null)
    .filter((o): o is RenderedObject => o !== null && typeof o === "object" && "kind" in o);
}

/**
 * Applies the chart's CRDs (charts/aidc-operator/crds) by server-side apply and waits
 * until each is Established.
 */
export async function installChartCrds(): Promise<void> {
  await runTool("kubectl", [
    "apply",
    "--server-side",
    "--force-conflicts",
    "--field-manager=aidc-operator-e2e",
    "-f",
    `${CHART_DIR}/crds`,
  ]);
  const { stdout } = await runTool("kubectl", ["get", "-f", `${CHART_DIR}/crds`, "-o", "name"]);
  const names = stdout.trim().split("\n");
  await eventually(async () => {
    const { stdout: conditions } = await runTool("kubectl", [
      "get",
      ...names,
      "-o",
      'jsonpath={range .items[*]}{.status.conditions[?(@.type=="Established")].status}{"\\n"}{end}',
    ]);
    const lines = conditions.trim().split("\n");
    return lines.length === names.length && lines.every((l) => l === "True");
  }, 30_000);
}

/** A ServiceAccount by namespace and name. */
export interface ServiceAccountRef {
  namespace: string;
  name: string;
}

/** The RBAC user name of a ServiceAccount. */
export function serviceAccountUser(sa: ServiceAccountRef): string {
  return `system:serviceaccount:${sa.namespace}:${sa.name}`;
}

/**
 * A KubeConfig that acts as `serviceAccount`, by impersonation, so that a client made
 * from it (the operator in a test, or a SelfSubjectAccessReview) gets exactly the
 * ServiceAccount's permissions: a missing RBAC rule fails with 403 as in a cluster.
 */
export function operatorKubeConfigFor(serviceAccount: ServiceAccountRef): k8s.KubeConfig {
  return impersonatingKubeConfig(serviceAccountUser(serviceAccount));
}

/** One access question: may the subject do `verb` on this resource? */
export interface Access {
  verb: string;
  group: string;
  /** Resource, optionally with `/subresource`. */
  resource: string;
  /** Namespace; empty for a cluster-wide request (e.g. list across namespaces). */
  namespace: string;
  name?: string;
}

/** Asks the API server, as the kubeconfig's user, whether `access` is allowed. */
export async function canI(kc: k8s.KubeConfig, access: Access): Promise<boolean> {
  const [resource, subresource] = access.resource.split("/");
  const review = await kc.makeApiClient(k8s.AuthorizationV1Api).createSelfSubjectAccessReview({
    body: {
      apiVersion: "authorization.k8s.io/v1",
      kind: "SelfSubjectAccessReview",
      spec: {
        resourceAttributes: {
          verb: access.verb,
          group: access.group,
          resource,
          ...(subresource ? { subresource } : {}),
          ...(access.namespace ? { namespace: access.namespace } : {}),
          ...(access.name ? { name: access.name } : {}),
        },
      },
    },
  });
  return review.status?.allowed === true;
}

/** A short random suffix for names that must not collide between runs. */
export function randomSuffix(): string {
  return Math.random().toString(36).slice(2, 8);
}

/** The `defaultMode` of the Deployment's api-key volume as the API server stored it. */
export async function storedApiKeyMode(namespace: string, deployment: string): Promise<number> {
  const { stdout } = await runTool("kubectl", [
    "get",
    "deployment",
    deployment,
    "--namespace",
    namespace,
    "-o",
    'jsonpath={.spec.template.spec.volumes[?(@.name=="api-key")].secret.defaultMode}',
  ]);
  return Number(stdout.trim());
}
