import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { parse, parseAllDocuments } from "yaml";
import { allCrds, catalogCrds, crdManifest } from "../crds/index.js";
import { defaultNasProducts, defaultTrainingProducts } from "../emulator/fixtures.js";
import { CRD_OUTPUT_DIRS, generatedFiles, renderCrdYaml } from "./crds.js";

const root = resolve(import.meta.dirname, "../..");
const samplesDir = join(root, "deploy/samples");
/** The set a user adapts to the real service: placeholders `<...>` instead of product codes. */
const realServiceDir = join(samplesDir, "real-service");

/** The objects of the sample files of `dir` (not its subdirectories). */
function sampleDocs(dir: string) {
  return readdirSync(dir)
    .filter((f) => f.endsWith(".yaml") && f !== "kustomization.yaml")
    .flatMap((f) =>
      parseAllDocuments(readFileSync(join(dir, f), "utf8")).map((d) => ({
        file: f,
        text: readFileSync(join(dir, f), "utf8"),
        obj: d.toJS() as { apiVersion: string; kind: string; spec: Record<string, unknown> },
      })),
    );
}

describe("the CRD generator", () => {
  it("renders YAML that parses back to the CRD object, for YAML 1.1 readers (Helm, kubectl -f) too", () => {
    for (const def of allCrds) {
      expect(parse(renderCrdYaml(def))).toEqual(crdManifest(def));
      expect(parse(renderCrdYaml(def), { version: "1.1" })).toEqual(crdManifest(def));
    }
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

  it("marks every CRD of the chart and of deploy/crds to outlive its install: Helm's keep, Argo CD's Prune=false", () => {
    for (const dir of CRD_OUTPUT_DIRS) {
      const files = readdirSync(join(root, dir)).filter((f) => f !== "kustomization.yaml");
      expect(files, dir).toHaveLength(allCrds.length);
      for (const f of files) {
        const crd = parse(readFileSync(join(root, dir, f), "utf8"));
        expect(crd.metadata.annotations, `${dir}/${f}`).toEqual({
          "helm.sh/resource-policy": "keep",
          "argocd.argoproj.io/sync-options": "Prune=false",
        });
      }
    }
  });

  it("keeps each CRD applicable client-side (Argo CD's default): its last-applied annotation under 256 KiB", () => {
    for (const def of allCrds) {
      // kubectl's last-applied-configuration is the object as compact JSON; the API server
      // refuses annotations over 262,144 bytes in all.
      const bytes = Buffer.byteLength(JSON.stringify(crdManifest(def)));
      expect(bytes, def.kind).toBeLessThan(262_144);
    }
  });

  it("matches the committed files (run `npm run generate` when this fails)", () => {
    for (const [path, content] of generatedFiles()) {
      expect(readFileSync(join(root, path), "utf8"), path).toBe(content);
    }
  });
});

describe("the samples", () => {
  const docs = sampleDocs(samplesDir);

  it("cover every kind, and the namespaced kinds' are all listed in the kustomization", () => {
    // Every kind people write; the catalogs are the operator's alone.
    const written = allCrds.filter((d) => !catalogCrds.includes(d));
    expect(new Set(docs.map((d) => d.obj.kind))).toEqual(new Set(written.map((d) => d.kind)));
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

describe("the samples for the real service (deploy/samples/real-service)", () => {
  const docs = sampleDocs(realServiceDir);
  /** The placeholders in the objects' values (comments aside). */
  const placeholders = (obj: unknown) =>
    [...JSON.stringify(obj).matchAll(/<[^>"]+>/g)].map((m) => m[0]);

  it("cover every kind people write, one object each", () => {
    const written = allCrds.filter((d) => !catalogCrds.includes(d));
    expect(docs.map((d) => d.obj.kind).sort()).toEqual(written.map((d) => d.kind).sort());
  });

  it("carry no product code of the emulator: product codes are placeholders", () => {
    const emulatorCodes = new Set(
      [...defaultTrainingProducts(), ...defaultNasProducts()].map((p) => p.productCode),
    );
    for (const { file, obj } of docs) {
      const code = obj.spec.productCode;
      if (code === undefined) continue;
      expect(emulatorCodes.has(String(code)), file).toBe(false);
      expect(String(code), file).toMatch(/^<.+>$/);
    }
  });

  it("satisfy the zod spec schema of their kind once the placeholders are filled in", () => {
    for (const { file, text } of docs) {
      const obj = parse(text.replaceAll(/<[^>\n]+>/g, "example")) as (typeof docs)[0]["obj"];
      const def = allCrds.find((d) => d.kind === obj.kind);
      expect(def?.spec.safeParse(obj.spec).error, file).toBeUndefined();
    }
  });

  it("have every placeholder explained in docs/getting-started.md", () => {
    const guide = readFileSync(join(root, "docs/getting-started.md"), "utf8");
    const missing = docs
      .flatMap((d) => placeholders(d.obj))
      .filter((p) => !guide.includes(`\`${p}\``));
    expect([...new Set(missing)]).toEqual([]);
  });
});

describe("the playground samples (deploy/samples)", () => {
  it("need no chart value beyond the defaults but adoption: no job asks for exposure", () => {
    for (const { file, obj } of sampleDocs(samplesDir)) {
      expect(obj.spec.exposePorts ?? false, file).toBe(false);
    }
  });
});

describe("aidc-operator crds into a pipe", () => {
  it("ends quietly when the reader stops early (| head), with no EPIPE trace", () => {
    const out = spawnSync(
      "bash",
      ["-c", "set -o pipefail; node --import tsx src/cli/main.ts crds | head -c 10"],
      { cwd: root, encoding: "utf8", timeout: 60_000 },
    );
    expect(out.stdout).toHaveLength(10);
    expect(out.stderr).toBe("");
    expect(out.status).toBe(0);
  }, 60_000);
});
