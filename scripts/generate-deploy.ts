/**
 * Renders the kustomize base's RBAC (deploy/rbac/) and manager (deploy/manager/) from the
 * Helm chart, so that `kubectl apply -k deploy` and `helm install` create the same
 * objects from the same sources: `helm template` with the chart's default values,
 * release `aidc-operator` in namespace `aidc-system`; only the Helm-specific labels
 * differ (no `helm.sh/chart`, `app.kubernetes.io/managed-by: kustomize`). The
 * Namespace, which Helm leaves to `--create-namespace`, is added with the Pod Security
 * `restricted` level. The chart requires `service.baseUrl`; the base has none (each
 * install has its own service): it is rendered with a placeholder that is then removed
 * from the config file, so an operator started from the base without an overlay that
 * sets it stops at once, naming `service.baseUrl`. Helm hooks (the pre-delete uninstall
 * check) are left out: kubectl has no uninstall to hook. `--check` fails when a file is
 * stale.
 *
 *   tsx scripts/generate-deploy.ts [--check]
 *
 * Needs helm: the control-plane binaries (AIDC_CONTROLPLANE_BIN_DIR, else built once).
 */
import { execFileSync } from "node:child_process";
import { basename } from "node:path";
import { isScalar, parseDocument, stringify, visit } from "yaml";
import { controlPlaneBinaries } from "../src/controlplane/binaries.js";
import {
  checkMode,
  type GeneratedFiles,
  generatedHeader,
  reportGenerated,
  root,
  syncGeneratedFiles,
} from "./generated-files.js";

/** Release name and namespace of the rendered base. */
export const BASE_RELEASE = "aidc-operator";
export const BASE_NAMESPACE = "aidc-system";
/** The Kubernetes version `helm template` renders for (checked by the chart's kubeVersion). */
export const RENDER_KUBE_VERSION = "v1.37.2";

const CHART = "charts/aidc-operator";
/** The base URL the base is rendered with, removed from its config file afterwards. */
export const BASE_URL_PLACEHOLDER = "https://service-base-url.invalid";
/** The placeholder's line in the rendered config file (indented in the ConfigMap). */
const PLACEHOLDER_LINE = new RegExp(
  `^ +baseUrl: ${BASE_URL_PLACEHOLDER.replaceAll(".", "\\.")}\n`,
  "m",
);

/**
 * `helm template` output for the kustomize base: rendered with the placeholder base URL,
 * which is then removed from the config file.
 */
export function baseTemplate(helm: string): string {
  const output = helmTemplate(helm, ["--set", `service.baseUrl=${BASE_URL_PLACEHOLDER}`]);
  if (!PLACEHOLDER_LINE.test(output)) {
    throw new Error("the placeholder base URL is not in the rendered config file");
  }
  return output.replace(PLACEHOLDER_LINE, "");
}
const RBAC_KINDS = new Set([
  "ServiceAccount",
  "ClusterRole",
  "ClusterRoleBinding",
  "Role",
  "RoleBinding",
]);

/** `helm template` of the chart with its default values (plus `args`). */
export function helmTemplate(helm: string, args: readonly string[] = []): string {
  return execFileSync(
    helm,
    [
      "template",
      BASE_RELEASE,
      CHART,
      "--namespace",
      BASE_NAMESPACE,
      "--kube-version",
      RENDER_KUBE_VERSION,
      ...args,
    ],
    { cwd: root, encoding: "utf8", maxBuffer: 16 * 1024 * 1024 },
  );
}

/** One rendered object: the template it came from, its kind, and its YAML. */
interface RenderedObject {
  source: string;
  kind: string;
  yaml: string;
}

/** Splits `helm template` output into objects, rewriting the Helm-specific labels. */
function renderedObjects(output: string): RenderedObject[] {
  const objects: RenderedObject[] = [];
  for (const chunk of output.split(/^---\s*$/m)) {
    const source = /^# Source: [^/]+\/templates\/(.+)$/m.exec(chunk)?.[1];
    if (!source) continue;
    // A leading-zero mode is octal to the API server (YAML 1.1) and decimal to this
    // generator (YAML 1.2): the two would disagree, so the chart writes modes in decimal.
    const octal = /^\s*(?:default)?[mM]ode:\s*0\d+\s*$/m.exec(chunk);
    if (octal) throw new Error(`${source}: write the file mode in decimal: ${octal[0].trim()}`);
    const doc = parseDocument(chunk.replace(/^# Source: .*\n/m, ""));
    visit(doc, {
      Pair(_, pair) {
        if (!isScalar(pair.key)) return;
        if (pair.key.value === "helm.sh/chart") return visit.REMOVE;
        if (pair.key.value === "app.kubernetes.io/managed-by" && isScalar(pair.value)) {
          pair.value.value = "kustomize";
        }
      },
    });
    const kind = doc.get("kind");
    if (typeof kind !== "string") throw new Error(`no kind in ${source}`);
    // Helm hooks (the uninstall check) run only around helm commands; kubectl has none.
    if (doc.getIn(["metadata", "annotations", "helm.sh/hook"]) !== undefined) continue;
    objects.push({ source, kind, yaml: doc.toString({ lineWidth: 0 }) });
  }
  return objects;
}

/** A kustomization listing `resources`. */
function kustomization(resources: string[], header: string): string {
  return (
    header +
    stringify(
      { apiVersion: "kustomize.config.k8s.io/v1beta1", kind: "Kustomization", resources },
      { lineWidth: 0 },
    )
  );
}

/** The Namespace of the base, at the Pod Security `restricted` level. */
function namespaceYaml(): string {
  return stringify(
    {
      apiVersion: "v1",
      kind: "Namespace",
      metadata: {
        name: BASE_NAMESPACE,
        labels: {
          "app.kubernetes.io/part-of": "aidc-operator",
          "app.kubernetes.io/managed-by": "kustomize",
          "pod-security.kubernetes.io/enforce": "restricted",
          "pod-security.kubernetes.io/warn": "restricted",
        },
      },
    },
    { lineWidth: 0 },
  );
}

/** Every file of deploy/rbac and deploy/manager, from the chart. */
export function deployFiles(helm: string): GeneratedFiles {
  const header = generatedHeader(
    "scripts/generate-deploy.ts",
    `${CHART} (helm template, default values, namespace ${BASE_NAMESPACE})`,
  );
  const byFile = new Map<string, string[]>();
  for (const obj of renderedObjects(baseTemplate(helm))) {
    const dir = RBAC_KINDS.has(obj.kind) ? "deploy/rbac" : "deploy/manager";
    const path = `${dir}/${basename(obj.source)}`;
    const docs = byFile.get(path) ?? [];
    docs.push(obj.yaml);
    byFile.set(path, docs);
  }
  const files: GeneratedFiles = new Map();
  files.set("deploy/manager/namespace.yaml", header + namespaceYaml());
  for (const [path, docs] of [...byFile].sort(([a], [b]) => a.localeCompare(b))) {
    files.set(path, header + docs.join("---\n"));
  }
  for (const dir of ["deploy/rbac", "deploy/manager"]) {
    const names = [...files.keys()]
      .filter((p) => p.startsWith(`${dir}/`))
      .map((p) => basename(p))
      .sort((a, b) =>
        a === "namespace.yaml" ? -1 : b === "namespace.yaml" ? 1 : a.localeCompare(b),
      );
    files.set(`${dir}/kustomization.yaml`, kustomization(names, header));
  }
  return files;
}

if (import.meta.main) {
  const check = checkMode();
  const { helm } = await controlPlaneBinaries();
  const problems = syncGeneratedFiles(
    deployFiles(helm),
    [
      { dir: "deploy/rbac", pattern: /\.yaml$/ },
      { dir: "deploy/manager", pattern: /\.yaml$/ },
    ],
    check,
  );
  reportGenerated("generate-deploy", problems, check);
}
