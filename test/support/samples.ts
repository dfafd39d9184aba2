import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseAllDocuments, parseDocument } from "yaml";

/** deploy/samples, which `kubectl apply -k` and the playground apply. */
export const SAMPLES_DIR = resolve(import.meta.dirname, "../../deploy/samples");

/** One object that deploy/samples/kustomization.yaml applies. */
export interface KustomizedSample {
  kind: string;
  name: string;
  /** The sample file it comes from, relative to deploy/samples. */
  file: string;
}

/**
 * The objects deploy/samples/kustomization.yaml applies (its `resources`, generated from
 * the samples of every namespaced kind by scripts/generate-kind-lists.ts), read from the
 * files: a test about "every sample" derives its list from here, so that a new kind's
 * sample is counted without editing the test.
 */
export function kustomizedSamples(): KustomizedSample[] {
  const kustomization = parseDocument(
    readFileSync(join(SAMPLES_DIR, "kustomization.yaml"), "utf8"),
  ).toJS() as { resources: string[] };
  return kustomization.resources.flatMap((file) =>
    parseAllDocuments(readFileSync(join(SAMPLES_DIR, file), "utf8"))
      .map((d) => d.toJS() as { kind?: string; metadata?: { name?: string } } | null)
      .filter((o) => o?.kind !== undefined)
      .map((o) => ({ kind: o?.kind ?? "", name: o?.metadata?.name ?? "", file })),
  );
}
