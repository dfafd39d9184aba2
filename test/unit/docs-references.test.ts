import { existsSync, readdirSync, readFileSync } from "node:fs";
import { basename, join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { metricReferences } from "../../scripts/generate-metrics-docs.js";
import { root } from "../../scripts/generated-files.js";
import { kindNames } from "../../scripts/new-kind/names.js";
import { kindFiles } from "../../scripts/new-kind.js";
import { markdownFiles } from "../support/markdown.js";

/**
 * What the pages cite by name exists: every repository path, identifier, aidc.io/
 * annotation, AIDC_ variable and metric a page shows, every symbol it cites in a file (`name`
 * of `file.ts`) in that file, every section the repository cites of a page
 * (docs/x.md, Section); README.md links every page and names every folder of src/.
 */

const read = (path: string) => readFileSync(join(root, path), "utf8");

/** The files of the repository whose base name is `name` (node_modules and dot-directories aside). */
function filesNamed(name: string): string[] {
  return readdirSync(root, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name === name)
    .map((e) => relative(root, join(e.parentPath, e.name)))
    .filter((p) => !p.split("/").some((part) => part === "node_modules" || part.startsWith(".")));
}

let codeWordsRead: Set<string> | undefined;

/** Every identifier and word of the code, the chart and the manifests (read once). */
function codeWords(): Set<string> {
  if (codeWordsRead) return codeWordsRead;
  const words = new Set<string>();
  codeWordsRead = words;
  for (const dir of ["src", "scripts", "test", "tools", "charts", "deploy"]) {
    for (const e of readdirSync(join(root, dir), { withFileTypes: true, recursive: true })) {
      const path = join(e.parentPath, e.name);
      if (!e.isFile() || !/\.(ts|go|sh|lua|ya?ml|tpl|json)$/.test(e.name)) continue;
      // The docs tests quote names as the pages do: they do not count as code.
      if (/test\/unit\/docs[\w-]*\.test\.ts$/.test(path)) continue;
      const text = readFileSync(path, "utf8");
      for (const m of text.matchAll(/[A-Za-z_]\w*/g)) words.add(m[0]);
    }
  }
  return words;
}

/** Names the pages cite that are Kubernetes' own, not this repository's. */
const KUBERNETES_NAMES = new Set(["envFrom"]);

describe("the paths and symbols the docs cite", () => {
  it("README.md's layout names every folder of src/", () => {
    const layout = read("README.md").split("## Layout")[1] ?? "";
    const folders = readdirSync(join(root, "src"), { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => `src/${e.name}/`);
    expect(folders.filter((f) => !layout.includes(f))).toEqual([]);
  });

  it("a folder's README under src/ names every module of the folder", () => {
    const unnamed: string[] = [];
    for (const dir of readdirSync(join(root, "src"), { withFileTypes: true })) {
      const folder = `src/${dir.name}`;
      if (!dir.isDirectory() || !existsSync(join(root, folder, "README.md"))) continue;
      const readme = read(`${folder}/README.md`);
      for (const file of readdirSync(join(root, folder))) {
        if (!/(?<!\.test|\.d)\.ts$/.test(file)) continue;
        const named = readme.includes(`\`${file}\``) || readme.includes(`${folder}/${file}`);
        if (!named) unnamed.push(`${folder}/README.md: ${file}`);
      }
    }
    expect(unnamed).toEqual([]);
  });

  it("README.md links every page of docs/", () => {
    const linked = new Set(
      [...read("README.md").matchAll(/\]\((docs\/[\w.-]+\.md)\)/g)].map((m) => m[1]),
    );
    const pages = readdirSync(join(root, "docs")).filter((f) => f.endsWith(".md"));
    expect(pages.filter((f) => !linked.has(`docs/${f}`))).toEqual([]);
  });

  it("name only identifiers the code has (camelCase, PascalCase or CONSTANT_CASE in a code span)", () => {
    const words = codeWords();
    const unknown: string[] = [];
    for (const file of markdownFiles()) {
      for (const m of read(file).matchAll(
        /`([a-z]+[A-Z]\w*|[A-Z][a-z0-9]+[A-Z]\w*|[A-Z][A-Z0-9]*_[A-Z0-9_]*[A-Z0-9])(?:\(\))?`/g,
      )) {
        const name = m[1] ?? "";
        if (!words.has(name) && !KUBERNETES_NAMES.has(name)) unknown.push(`${file}: ${name}`);
      }
    }
    expect(unknown).toEqual([]);
  });

  it("name files and folders of the repository that exist", () => {
    const missing: string[] = [];
    // adding-a-kind.md names the files a new kind's scaffold writes.
    const scaffolded = new Set(kindFiles(kindNames("Gizmo")).keys());
    for (const file of markdownFiles()) {
      const text = read(file);
      // A repository path: not inside a URL or a relative link (no "/" or "." before it).
      for (const m of text.matchAll(
        /(?<![\w./-])(?:src|test|scripts|tools|charts|deploy|docs|\.ci)\/[\w./-]*\w/g,
      )) {
        if (!existsSync(join(root, m[0])) && !scaffolded.has(m[0])) {
          missing.push(`${file}: ${m[0]}`);
        }
      }
    }
    expect(missing).toEqual([]);
  });

  it("name only aidc.io/ annotations, labels and finalizers the code has", () => {
    const src = readdirSync(join(root, "src"), { withFileTypes: true, recursive: true })
      .filter((e) => e.isFile() && e.name.endsWith(".ts") && !e.name.endsWith(".test.ts"))
      .map((e) => readFileSync(join(e.parentPath, e.name), "utf8"))
      .join("\n");
    const unknown: string[] = [];
    for (const file of markdownFiles()) {
      for (const m of read(file).matchAll(/\baidc\.io\/[a-z0-9][a-z0-9-]*(?<!-)/g)) {
        // Widget is the runtime README's example kind.
        if (!src.includes(m[0]) && m[0] !== "aidc.io/widget") unknown.push(`${file}: ${m[0]}`);
      }
    }
    expect(unknown).toEqual([]);
  });

  it("name only metrics the operator serves (a histogram's _bucket, _sum and _count too)", () => {
    const served = new Set(
      metricReferences().flatMap((m) =>
        m.type === "histogram"
          ? ["", "_bucket", "_sum", "_count"].map((s) => m.name + s)
          : [m.name],
      ),
    );
    const unknown: string[] = [];
    let seen = 0;
    for (const file of markdownFiles()) {
      for (const m of read(file).matchAll(
        /\b(?:aidc|controller_runtime|workqueue|rest_client|leader_election)_[a-z_]*[a-z]\b/g,
      )) {
        seen++;
        if (!served.has(m[0])) unknown.push(`${file}: ${m[0]}`);
      }
    }
    expect(seen).toBeGreaterThan(20);
    expect(unknown).toEqual([]);
  });

  it("name only environment variables the code has (AIDC_X_* as a prefix)", () => {
    const words = [...codeWords()];
    const unknown: string[] = [];
    for (const file of markdownFiles()) {
      for (const m of read(file).matchAll(/\bAIDC_[A-Z0-9_]*[A-Z0-9](_?\*)?/g)) {
        const name = m[0].replace(/_?\*$/, "");
        const known = m[1] ? words.some((w) => w.startsWith(name)) : words.includes(name);
        if (!known) unknown.push(`${file}: ${m[0]}`);
      }
    }
    expect(unknown).toEqual([]);
  });

  it('name sections of a page that it has (docs/x.md, Heading or docs/x.md ("Heading"))', () => {
    const wrong: string[] = [];
    let cited = 0;
    for (const dir of ["src", "scripts", "test", "charts", "deploy", "docs", "tools"]) {
      for (const e of readdirSync(join(root, dir), { withFileTypes: true, recursive: true })) {
        if (!e.isFile() || !/\.(ts|md|ya?ml|tpl|go|sh)$/.test(e.name)) continue;
        const file = relative(root, join(e.parentPath, e.name));
        if (/^test\/unit\/docs[\w-]*\.test\.ts$/.test(file)) continue;
        const text = read(file).replaceAll(/\s*\n\s*(?:\*|#|\/\/)?\s*/g, " ");
        for (const m of text.matchAll(
          /(docs\/[a-z-]+\.md)(?:, ([A-Z][\w' -]*\w)(?=[).;])| \("([^"]+)"\))/g,
        )) {
          const [, page = "", plain, quoted] = m;
          const section = plain ?? quoted ?? "";
          cited++;
          // A heading, or a paragraph's bold lead-in (**Status size**).
          const headings = [
            ...read(page)
              .split("\n")
              .filter((l) => /^#{1,6} /.test(l))
              .map((l) => l.replace(/^#+ /, "").replaceAll("`", "")),
            ...[...read(page).matchAll(/\*\*([^*]+)\*\*/g)].map((b) => b[1] ?? ""),
          ];
          if (!headings.some((h) => h.startsWith(section))) {
            wrong.push(`${file}: ${page}, "${section}"`);
          }
        }
      }
    }
    expect(cited).toBeGreaterThan(10);
    expect(wrong).toEqual([]);
  });

  it("name symbols that the file they cite them in has (`name` of `file.ts`)", () => {
    const wrong: string[] = [];
    let cited = 0;
    for (const file of markdownFiles()) {
      const text = read(file).replaceAll(/\s+/g, " ");
      for (const m of text.matchAll(
        /`([A-Za-z_][\w.]*)(?:\(\))?`,? (?:of|in) `((?:[\w-]+\/)*[\w.-]+\.ts)`/g,
      )) {
        const [, symbol = "", path = ""] = m;
        const files = existsSync(join(root, path)) ? [path] : filesNamed(basename(path));
        const name = symbol.split(".").at(-1) ?? "";
        cited++;
        const has = files.some((f) => new RegExp(`\\b${name}\\b`).test(read(f)));
        if (!has)
          wrong.push(`${file}: ${symbol} in ${path} (${files.join(", ") || "no such file"})`);
      }
    }
    expect(cited).toBeGreaterThan(10);
    expect(wrong).toEqual([]);
  });
});
