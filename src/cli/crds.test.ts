import { readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { parse, parseAllDocuments } from "yaml";
import { allCrds, crdManifest } from "../crds/index.js";
import { generatedFiles, renderCrdYaml } from "./crds.js";

const root = resolve(import.meta.dirname, "../..");
const samplesDir = join(root, "deploy/samples");

describe("the CRD generator", () => {
  it("renders YAML that parses back to the CRD object", () => {
    for (const def of allCrds) expect(parse(renderCrdYaml(def))).toEqual(crdManifest(def));
  });

  it("writes the same CRD files to deploy/crds and the chart", () => {
    const files = generatedFiles();
    for (const def of allCrds) {
      const name = `${def.plural}.${def.group}.yaml`;
      expect(files.get(`deploy/crds/${name}`)).toBe(files.get(`charts/aidc-operator/crds/${name}`));
    }
    expect(parse(files.get("deploy/crds/kustomization.yaml") ?? "").resources).toHaveLength(
      allCrds.length,
    );
  });

  it("matches the committed files (run `npm run generate` when this fails)", () => {
    for (const [path, content] of generatedFiles()) {
      expect(readFileSync(join(root, path), "utf8"), path).toBe(content);
    }
  });
});

describe("the samples", () => {
  const docs = readdirSync(samplesDir)
    .filter((f) => f !== "kustomization.yaml")
    .flatMap((f) =>
      parseAllDocuments(readFileSync(join(samplesDir, f), "utf8")).map((d) => ({
        file: f,
        obj: d.toJS() as { apiVersion: string; kind: string; spec: unknown },
      })),
    );

  it("cover every kind, and the namespaced kinds' are all listed in the kustomization", () => {
    expect(new Set(docs.map((d) => d.obj.kind))).toEqual(new Set(allCrds.map((d) => d.kind)));
    // `kubectl apply -k deploy/samples -n <ns>` applies the namespaced samples; a
    // cluster-scoped one (ServiceConnection) is applied on its own.
    const clusterScoped = new Set(allCrds.filter((d) => !d.namespaced).map((d) => d.kind));
    const namespacedFiles = docs.filter((d) => !clusterScoped.has(d.obj.kind)).map((d) => d.file);
    const listed = parse(readFileSync(join(samplesDir, "kustomization.yaml"), "utf8")).resources;
    expect([...listed].sort()).toEqual([...new Set(namespacedFiles)].sort());
  });

  it("satisfy the zod spec schema of their kind", () => {
    for (const { file, obj } of docs) {
      const def = allCrds.find((d) => d.kind === obj.kind);
      expect(obj.apiVersion, file).toBe("aidc.io/v1alpha1");
      expect(def?.spec.safeParse(obj.spec).error, file).toBeUndefined();
    }
  });
});
