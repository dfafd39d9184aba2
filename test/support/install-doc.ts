import { readFileSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { parse, stringify } from "yaml";
import { root } from "../../scripts/generated-files.js";

/** What docs/install.md's commands and overlay name, replaced by a test's own. */
const DOC_NAMESPACE = "ml-platform";
const DOC_BASE_URL = "https://<the service's base URL>";
const DOC_OVERLAY = "overlays/prod";

function installDoc(): string {
  return readFileSync(join(root, "docs/install.md"), "utf8");
}

/**
 * Writes the overlay of docs/install.md as written into `dir`, but for where it finds
 * deploy/ and the namespace (`namespace`, for the documented `ml-platform`).
 */
export function writeDocumentedOverlay(dir: string, namespace: string): void {
  const block = /```yaml\n(# overlays\/prod\/kustomization\.yaml[\s\S]*?)```/.exec(
    installDoc(),
  )?.[1];
  if (!block) throw new Error("no overlay in docs/install.md");
  const overlay = parse(block) as { resources: string[]; namespace: string };
  if (overlay.namespace !== DOC_NAMESPACE) {
    throw new Error(`the overlay's namespace is ${overlay.namespace}, not ${DOC_NAMESPACE}`);
  }
  overlay.resources = [relative(dir, join(root, "deploy"))];
  overlay.namespace = namespace;
  writeFileSync(join(dir, "kustomization.yaml"), stringify(overlay));
}

/** The commands of docs/install.md's move from kustomize to Helm. */
export interface DocumentedMove {
  /** `helm upgrade --install ...`, arguments after `helm`. */
  helm: string[];
  /** What the comment adds for Helm 4. */
  helm4Extra: string[];
  /** The lines after it (`kubectl ...`), arguments after `kubectl`. */
  kubectl: string[][];
  /** What a Helm without `--take-ownership` runs first (`kubectl` arguments). */
  olderHelm: string[][];
}

/**
 * The "Moving to Helm" commands of docs/install.md, for `namespace`, the overlay in
 * `overlay` and the service at `baseUrl` (the documented `ml-platform`,
 * `overlays/prod` and placeholder URL).
 */
export function documentedMove(
  namespace: string,
  overlay: string,
  baseUrl: string,
): DocumentedMove {
  const doc = installDoc();
  const start = doc.indexOf("### Moving to Helm");
  const section = doc.slice(start, doc.indexOf("\n#", start + 1));
  const block = /```sh\n([\s\S]*?)```/.exec(section)?.[1];
  if (start < 0 || !block) throw new Error("no Moving to Helm commands in docs/install.md");
  const lines = block
    .replaceAll(DOC_BASE_URL, baseUrl)
    .replace(/\\\n\s*/g, " ")
    .split("\n")
    .filter((l) => l.trim() !== "");
  const words = (line: string) =>
    line
      .replace(/#.*$/, "")
      .trim()
      .split(/\s+/)
      .map((w) => (w === DOC_NAMESPACE ? namespace : w))
      .map((w) => (w === DOC_OVERLAY ? overlay : w))
      .map((w) => w.replace(`=${DOC_NAMESPACE}`, `=${namespace}`));
  const [helmLine, ...rest] = lines;
  const [tool, ...helm] = words(helmLine ?? "");
  if (tool !== "helm") throw new Error(`the move's first command is not helm: ${helmLine}`);
  const extra = /# Helm 4: and (.+)$/.exec(helmLine ?? "")?.[1];
  if (!extra) throw new Error(`no Helm 4 flag in the comment of ${helmLine}`);
  const kubectl = rest.map((l) => {
    const [t, ...args] = words(l);
    if (t !== "kubectl") throw new Error(`not a kubectl command: ${l}`);
    return args;
  });
  const olderHelm = [...section.matchAll(/`kubectl (annotate|label) -k ([^`]+)`/g)].map((m) =>
    words(`${m[1]} -k ${m[2]}`.replace(/\s+/g, " ")),
  );
  if (olderHelm.length !== 2) throw new Error("no annotate and label commands for an older Helm");
  return { helm, helm4Extra: extra.trim().split(/\s+/), kubectl, olderHelm };
}
