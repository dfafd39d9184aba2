import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { root } from "../../scripts/generated-files.js";
import { kindNames } from "../../scripts/new-kind/names.js";
import { kindFiles } from "../../scripts/new-kind.js";
import { generatedFiles } from "../../src/cli/crds.js";
import { operatorConfigSchema } from "../../src/config/schema.js";
import { DEFAULT_TASK_STATUS_TABLE } from "../../src/controllers/trainingjob/status-class.js";
import { allCrds, REASONS } from "../../src/crds/index.js";
import { SUBSCRIPTION_RESULT_SHAPES } from "../../src/emulator/behaviour.js";
import { FAULT_KINDS } from "../../src/emulator/faults.js";
import { KIND_SETTING_NAMES, kindSettingDefaults } from "../../src/emulator/kind-settings.js";
import { subscriptionStateOf } from "../../src/service/schemas/create.js";
import { storageStateClass } from "../../src/service/schemas/file-systems.js";
import { markdownFiles } from "../support/markdown.js";
import { STATUS_BOUNDS_KIB } from "../support/status-size.js";

/**
 * The hand-written pages that restate a table of the code restate it whole: the files
 * `npm run new-kind` writes (adding-a-kind.md), the status bounds the size tests hold
 * (custom-resources.md), the built-in task status words (controllers.md), the columns
 * `kubectl get` shows, where each kind lives, the emulator's fault kinds and the client's
 * state words, a default stated beside a setting, and the condition a reason is said to
 * be on. A change of the code that leaves the page behind fails here; what the
 * pages cite by name is held in docs-references.test.ts.
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

  it("adding-a-kind.md names every file the kinds' generator writes (CRDs and their docs)", () => {
    const section =
      read("docs/adding-a-kind.md").split("## What `npm run generate` writes")[1] ?? "";
    const unnamed = [...generatedFiles().keys()].filter(
      (path) => !section.includes(`\`${path}\``) && !section.includes(`\`${dirname(path)}/\``),
    );
    expect(unnamed).toEqual([]);
  });

  it("state a setting's default as the operator config has it (`key` (10 s), `key`, 10 min)", () => {
    const defaults = operatorConfigSchema.parse({ service: { baseUrl: "https://x.example" } });
    const UNITS: Record<string, number> = {
      ms: 1,
      s: 1000,
      min: 60_000,
      minutes: 60_000,
      h: 3_600_000,
      hours: 3_600_000,
      KiB: 1024,
      MiB: 1024 ** 2,
    };
    const wrong: string[] = [];
    let seen = 0;
    for (const file of markdownFiles()) {
      const text = read(file).replaceAll(/\s+/g, " ");
      for (const m of text.matchAll(
        /`([a-z][A-Za-z]*(?:\.[A-Za-z0-9]+)*)`(?: \(|, )([\d,.]+) ?(ms|s|min|minutes|h|hours|KiB|MiB)\b/g,
      )) {
        const [, key = "", figure = "", unit = ""] = m;
        const value = key
          .split(".")
          .reduce<unknown>((o, k) => (o as Record<string, unknown> | undefined)?.[k], defaults);
        if (typeof value !== "number") continue;
        seen++;
        const stated = Number(figure.replaceAll(",", "")) * (UNITS[unit] ?? Number.NaN);
        if (stated !== value) wrong.push(`${file}: ${m[0]} (default ${value})`);
      }
    }
    expect(seen).toBeGreaterThanOrEqual(6);
    expect(wrong).toEqual([]);
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
        // REASON holds the reason of the first condition that is not True: a reason shown
        // beside nothing False or Unknown is one the column leaves empty.
        const reasons = (comment.match(/\b[A-Z][A-Za-z0-9]+\b/g) ?? []).filter((w) =>
          REASONS.has(w),
        );
        if (reasons.length > 0 && !/False|Unknown/.test(comment)) {
          wrong.push(
            `${file}: kubectl get ${name}: REASON shows ${reasons[0]} only of a condition not True`,
          );
        }
      }
    }
    expect(seen).toBeGreaterThan(10);
    expect(wrong).toEqual([]);
  });

  it("say of the REASON column which condition it shows, as the CRDs' column reads it", () => {
    const paths = new Set(
      allCrds
        .flatMap((c) => c.printerColumns.filter((p) => p.name === "Reason"))
        .map((p) => p.jsonPath),
    );
    expect(paths.size).toBe(1);
    // `@.status=="False"` reads "False", `@.status!="True"` "not True".
    const [, op, value] = /@\.status([!=]=)"(\w+)"/.exec([...paths][0] ?? "") ?? [];
    const shown = op === "!=" ? `not ${value}` : value;
    const wrong: string[] = [];
    let seen = 0;
    for (const file of markdownFiles()) {
      const sentences = read(file)
        .replaceAll(/\s+/g, " ")
        .split(/(?<=\.) /);
      for (const sentence of sentences.filter((t) => t.includes("REASON"))) {
        const m = /\bfirst (?:condition that is (not \w+|\w+)|(\w+) condition)/.exec(sentence);
        if (!m) continue;
        seen++;
        if ((m[1] ?? m[2]) !== shown) wrong.push(`${file}: "${sentence}"`);
      }
    }
    expect(seen).toBeGreaterThanOrEqual(3);
    expect(wrong).toEqual([]);
  });

  it("conditions.md's table of conditions has every condition a reason is written on", () => {
    const rows = tableAfter("docs/conditions.md", "| condition | meaning |");
    const named = new Set(rows.flatMap(([condition = ""]) => spans(condition)));
    const written = new Set(REASONS.entries().flatMap(([, e]) => e.conditions));
    expect([...written].filter((c) => !named.has(c))).toEqual([]);
  });

  it("put a reason only on a condition the reason table writes it on (`Synced=False` `DriftDetected`)", () => {
    const types = [...new Set(REASONS.entries().flatMap(([, e]) => e.conditions))].join("|");
    const wrong: string[] = [];
    let seen = 0;
    for (const file of markdownFiles()) {
      const text = read(file).replaceAll(/\s+/g, " ");
      for (const m of text.matchAll(
        new RegExp(`\\b(${types})=(?:True|False|Unknown)\`? \`([A-Z]\\w+)\``, "g"),
      )) {
        const [said, type = "", reason = ""] = m;
        seen++;
        const on = REASONS.entry(reason)?.conditions;
        if (!on?.includes(type))
          wrong.push(`${file}: ${said} (the table: ${on?.join(", ") ?? "none"})`);
      }
    }
    expect(seen).toBeGreaterThan(15);
    expect(wrong).toEqual([]);
  });

  it("watch one kind per `kubectl get -w`, the only watch kubectl does", () => {
    const categories = new Set(allCrds.flatMap((c) => c.categories ?? []));
    const wrong: string[] = [];
    for (const file of markdownFiles()) {
      for (const m of read(file).matchAll(
        /kubectl\b[^\n`#]*?\bget\s+(\S+)[^\n`#]*?\s(?:-w|--watch)\b/g,
      )) {
        const types = m[1] ?? "";
        if (types.includes(",") || categories.has(types) || types === "all") {
          wrong.push(`${file}: ${m[0]} (kubectl: "you may only specify a single resource type")`);
        }
      }
    }
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

  it("service-assumptions.md names every fault kind, result shape and kind setting (with its default) of the emulator", () => {
    const page = read("docs/service-assumptions.md");
    const section12 = page.slice(page.indexOf("## 12."), page.indexOf("## 13."));
    const named = [...FAULT_KINDS, ...SUBSCRIPTION_RESULT_SHAPES, ...KIND_SETTING_NAMES];
    expect(named.filter((n) => !section12.includes(`\`${n}\``))).toEqual([]);
    // Each kind setting with its default: `name` (what it does; 0) or (…; 1 s; …).
    const defaults = kindSettingDefaults();
    const text = section12.replaceAll(/\s+/g, " ");
    const wrong = KIND_SETTING_NAMES.filter((n) => {
      const group = new RegExp(`\`${n}\` \\(([^()]*)\\)`).exec(text)?.[1] ?? "";
      const [, figure, unit] = /(?:^|; )(\d+)(?: (ms|s))?(?:;|$)/.exec(group) ?? [];
      return Number(figure) * (unit === "s" ? 1000 : 1) !== defaults[n];
    });
    expect(wrong).toEqual([]);
  });

  it("performance.md's current figures name, per section, the commit they were measured at", () => {
    const page = read("docs/performance.md");
    const current = page.slice(
      page.indexOf("## Current figures"),
      page.indexOf("\n## ", page.indexOf("## Current figures") + 1),
    );
    const sections = current.split(/\n(?=### )/).slice(1);
    expect(sections.length).toBeGreaterThan(3);
    const unnamed = sections
      .filter((sec) => /\d(?:\.\d+)? ?(?:ms|MiB|GiB)\b/.test(sec) && !/\b[0-9a-f]{7}\b/.test(sec))
      .map((sec) => sec.split("\n")[0]);
    expect(unnamed).toEqual([]);
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
