import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { root } from "../../scripts/generated-files.js";
import { markdownFiles } from "../support/markdown.js";

/**
 * The YAML users hand to Helm and kubectl reads the same to YAML 1.1 readers (Helm and
 * `kubectl apply -f`: sigs.k8s.io/yaml) as to 1.2 ones (kustomize, this repository's
 * scripts): a bare `Off`, `yes` or `on` is a boolean to the first and a string to the
 * second, and a CRD enum or a value of the wrong type follows.
 */

/** The YAML files of `dir` (recursively), Helm templates left out. */
function yamlFiles(dir: string): string[] {
  return readdirSync(join(root, dir), { recursive: true, encoding: "utf8" })
    .filter((f) => /\.ya?ml$/.test(f) && !f.split("/").includes("templates"))
    .map((f) => join(dir, f));
}

/** The documents of `text` as YAML `version` reads them. */
function read(text: string, version: "1.1" | "1.2"): unknown[] {
  return parseAllDocuments(text, { version }).map((d) => d.toJS());
}

describe("YAML for Helm and kubectl", () => {
  it("reads the same as YAML 1.1 and 1.2: the chart, deploy/ and the docs' yaml blocks", () => {
    const sources = [...yamlFiles("charts"), ...yamlFiles("deploy")].map((file) => ({
      where: file,
      text: readFileSync(join(root, file), "utf8"),
    }));
    expect(sources.length).toBeGreaterThan(20);
    for (const file of markdownFiles()) {
      const text = readFileSync(join(root, file), "utf8");
      for (const [i, m] of [...text.matchAll(/```yaml\n([\s\S]*?)```/g)].entries()) {
        sources.push({ where: `${file} yaml block ${i + 1}`, text: m[1] ?? "" });
      }
    }
    const differing = sources
      .filter(({ text }) => JSON.stringify(read(text, "1.1")) !== JSON.stringify(read(text, "1.2")))
      .map(({ where }) => where);
    expect(differing).toEqual([]);
  });
});
