import { existsSync, readdirSync, readFileSync } from "node:fs";
import { basename, join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { root } from "../../scripts/generated-files.js";
import { kindNames } from "../../scripts/new-kind/names.js";
import { kindFiles } from "../../scripts/new-kind.js";
import { DEFAULT_TASK_STATUS_TABLE } from "../../src/controllers/trainingjob/status-class.js";
import { allCrds } from "../../src/crds/index.js";
import { SUBSCRIPTION_RESULT_SHAPES } from "../../src/emulator/behaviour.js";
import { FAULT_KINDS } from "../../src/emulator/faults.js";
import { KIND_SETTING_NAMES } from "../../src/emulator/kind-settings.js";
import { subscriptionStateOf } from "../../src/service/schemas/create.js";
import { storageStateClass } from "../../src/service/schemas/file-systems.js";
import { markdownFiles } from "../support/markdown.js";
import { STATUS_BOUNDS_KIB } from "../support/status-size.js";

/**
 * The hand-written pages that restate a table of the code restate it whole: the files
 * `npm run new-kind` writes (adding-a-kind.md), the status bounds the size tests hold
 * (custom-resources.md), the built-in task status words (controllers.md), the columns
 * `kubectl get` shows. A change of
 * the code that leaves the page behind fails here. And every repository path a page
 * names exists, as does every identifier and AIDC_ variable it shows, and every symbol it
 * cites in a file (`name` of `file.ts`) is in that file.
 */

const read = (path: string) => readFileSync(join(root, path), "utf8");

/** The rows of the first table after `heading` in `page`, as cells. */
function tableAfter(page: string, heading: string): string[][] {
  const text = read(page);
  const at = text.indexOf(heading);
  expect(at, `${page} has "${heading}"`).toBeGreaterThanOrEqual(0);
  const lines = text.slice(at).split("\n");
  const first = lines.findIndex((l) => l.trim().startsWith("|"));
  const rows: string[][] = [];
  for (const line of lines.slice(first + 2)) {
    if (!line.trim().startsWith("|")) break;
    rows.push(
      line
        .trim()
        .slice(1, -1)
        .split(/(?<!\\)\|/)
        .map((c) => c.trim()),
    );
  }
  return rows;
}

/** The code spans of a cell. */
const spans = (cell: string) => [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1] ?? "");

describe("the pages that restate a table of the code", () => {
  it("adding-a-kind.md names every file the scaffold writes, and no other", () => {
    const rows = tableAfter("docs/adding-a-kind.md", "## What the scaffold writes");
    const named = rows.flatMap(([file = ""]) => {
      const [path = "", ...more] = spans(file);
      // "`decisions.ts` (+ `.test.ts`)": the test beside it.
      return [path, ...more.map((suffix) => path.replace(/\.ts$/, suffix))];
    });
    expect(named.sort()).toEqual([...kindFiles(kindNames("Gizmo")).keys()].sort());
  });

  it("custom-resources.md states the status bound of every kind the size tests hold", () => {
    const rows = tableAfter("docs/custom-resources.md", "| Kind | Bound |");
    const stated = Object.fromEntries(
      rows.map(([kind = "", bound = ""]) => [kind, Number(/^(\d+) KiB/.exec(bound)?.[1])]),
    );
    const { TrainingJob1024Pods, ...bounds } = STATUS_BOUNDS_KIB;
    expect(stated).toEqual(bounds);
    const job = rows.find(([kind]) => kind === "TrainingJob")?.[1];
    expect(job).toContain(`${TrainingJob1024Pods} KiB with 1024`);
  });

  it("name only the columns `kubectl get <kind>` shows, in a comment beside it", () => {
    const wrong: string[] = [];
    let seen = 0;
    for (const file of markdownFiles()) {
      for (const m of read(file).matchAll(/kubectl get ([a-z]+)\b[^#\n]*#([^\n]*)/g)) {
        const [, name = "", comment = ""] = m;
        const crd = allCrds.find((c) => c.plural === name || c.shortNames.includes(name));
        if (!crd) continue;
        const columns = new Set(crd.printerColumns.map((c) => c.name.toUpperCase()));
        for (const col of comment.match(/\b[A-Z][A-Z0-9]*(?:-[A-Z0-9]+)*\b/g) ?? []) {
          seen++;
          if (!columns.has(col)) wrong.push(`${file}: kubectl get ${name} shows no ${col}`);
        }
      }
    }
    expect(seen).toBeGreaterThan(10);
    expect(wrong).toEqual([]);
  });

  it("architecture.md says where every kind lives", () => {
    const rows = tableAfter("docs/architecture.md", "## Where each kind lives");
    const named = rows.flatMap(([kinds = ""]) => kinds.split(",").map((k) => k.trim()));
    expect(named.sort()).toEqual(allCrds.map((c) => c.kind).sort());
  });

  it("service-assumptions.md reads each state word it lists as the client does", () => {
    const page = read("docs/service-assumptions.md").replaceAll(/\s+/g, " ");
    const wrong: string[] = [];
    const section7 = page.slice(page.indexOf("## 7."), page.indexOf("## 8."));
    for (const m of section7.matchAll(/(Pending|Succeeded|Failed): ([a-z_, ]+)\./g)) {
      for (const w of (m[2] ?? "").split(", ")) {
        if (subscriptionStateOf(w) !== m[1]) wrong.push(`subscription ${w}: not ${m[1]}`);
      }
    }
    const section11a = page.slice(page.indexOf("### 11a."), page.indexOf("### 11b."));
    const classes = {
      ready: "Ready",
      "under way": "Creating",
      going: "Deleting",
      failed: "Failed",
    };
    for (const m of section11a.matchAll(/(ready|under way|going|failed) — ([a-z-, ]+)[;.]/g)) {
      const cls = classes[m[1] as keyof typeof classes];
      for (const w of (m[2] ?? "").split(", ")) {
        if (storageStateClass(w) !== cls) wrong.push(`file system ${w}: not ${cls}`);
      }
    }
    expect(wrong).toEqual([]);
    expect(section7.match(/Pending: /) && section11a.match(/going — /)).toBeTruthy();
  });

  it("service-assumptions.md names every fault kind, result shape and kind setting of the emulator", () => {
    const page = read("docs/service-assumptions.md");
    const section12 = page.slice(page.indexOf("## 12."), page.indexOf("## 13."));
    const named = [...FAULT_KINDS, ...SUBSCRIPTION_RESULT_SHAPES, ...KIND_SETTING_NAMES];
    expect(named.filter((n) => !section12.includes(`\`${n}\``))).toEqual([]);
  });

  it("controllers.md lists every built-in task status word under its class", () => {
    const rows = tableAfter("docs/controllers.md", "| class | default words |");
    const listed: Record<string, string> = {};
    for (const [cls = "", words = ""] of rows) {
      for (const w of words.split(",").map((x) => x.trim())) if (w) listed[w] = cls;
    }
    expect(listed).toEqual(DEFAULT_TASK_STATUS_TABLE);
  });
});

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
      // This file names the exceptions: it does not count as code.
      if (path === import.meta.filename) continue;
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
        if (file === relative(root, import.meta.filename)) continue;
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
