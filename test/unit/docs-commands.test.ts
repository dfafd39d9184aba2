import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Command } from "commander";
import { describe, expect, it } from "vitest";
import { root } from "../../scripts/generated-files.js";
import { registerControlPlaneCommand } from "../../src/cli/controlplane.js";
import { registerDevCommand } from "../../src/cli/dev-command.js";
import { registerEmulatorCommand } from "../../src/cli/emulator.js";
import { operatorProgram } from "../../src/cli/program.js";
import {
  BENCH_FLAGS,
  CHAOS_FLAGS,
  COMPARE_BUILDS_FLAGS,
  PATH_FILES_FLAGS,
} from "../bench/script-flags.js";
import { markdownFiles } from "../support/markdown.js";

/**
 * The docs show commands as they run: a command a page shows (`aidc-operator <command>`,
 * the npm scripts that run one, the measuring scripts) exists and has every flag shown
 * with it, and a page's table of a command's flags (a table whose first column is
 * "flag", under the command it documents) lists each of them. A flag renamed or
 * dropped in code fails here, not in a reader's terminal.
 */

/** The `aidc-operator` program of a checkout: the image's commands and the development ones. */
function repositoryProgram(): Command {
  const program = operatorProgram();
  registerControlPlaneCommand(program);
  registerDevCommand(program);
  registerEmulatorCommand(program);
  return program;
}

const program = repositoryProgram();
const cliFlags = (name: string): Set<string> | undefined => {
  const cmd = program.commands.find((c) => c.name() === name);
  return cmd && new Set([...cmd.options.map((o) => o.long ?? ""), "--help"]);
};
const scriptFlags = (flags: object) =>
  new Set([...Object.keys(flags).map((f) => `--${f}`), "--help"]);

/** The npm scripts that run a command of the CLI or a measuring script, by name. */
const NPM_SCRIPTS: Record<string, () => Set<string> | undefined> = {
  operator: () => cliFlags("run"),
  emulator: () => cliFlags("emulator"),
  dev: () => cliFlags("dev"),
  controlplane: () => cliFlags("controlplane"),
  bench: () => scriptFlags(BENCH_FLAGS),
  chaos: () => scriptFlags(CHAOS_FLAGS),
  "path-files": () => scriptFlags(PATH_FILES_FLAGS),
};

/** A command a page shows: its words, and the flags it has (undefined: no such command). */
interface Shown {
  command: string;
  flags: Set<string> | undefined;
}

/**
 * The command `text` starts with (after `VAR=value` assignments, `tsx` or `node`), if it
 * is one of this repository's, with what follows it on the line.
 */
function commandOf(text: string): { shown: Shown; rest: string } | undefined {
  const words = text.trim().replace(/^(?:[A-Z_]+=\S*\s+)*(?:tsx\s+|node\s+)?/, "");
  let m = /^aidc-operator\s+([a-z][\w-]*)(.*)$/s.exec(words);
  if (m) {
    const name = m[1] ?? "";
    return { shown: { command: `aidc-operator ${name}`, flags: cliFlags(name) }, rest: m[2] ?? "" };
  }
  m = /^npm run(?:\s+-s)?\s+([a-z][\w-]*)(.*)$/s.exec(words);
  if (m && (m[1] ?? "") in NPM_SCRIPTS) {
    const name = m[1] ?? "";
    return {
      shown: { command: `npm run ${name}`, flags: NPM_SCRIPTS[name]?.() },
      rest: m[2] ?? "",
    };
  }
  m = /^\S*test\/bench\/compare-builds\.ts(.*)$/s.exec(words);
  if (m) {
    return {
      shown: { command: "compare-builds.ts", flags: scriptFlags(COMPARE_BUILDS_FLAGS) },
      rest: m[1] ?? "",
    };
  }
  return undefined;
}

/** The long flags of `text`, a flag's value aside (`--node-args=--optimize-for-size`). */
function flagsIn(text: string): string[] {
  return [...text.matchAll(/(?<![\w=-])--[a-z][a-z0-9-]*/g)].map((m) => m[0]);
}

/** What a page shows: each command with the flags given to it, and each flag table. */
function commandsOf(text: string): {
  uses: { shown: Shown; flags: string[] }[];
  tables: { shown: Shown; flags: string[] }[];
} {
  const uses: { shown: Shown; flags: string[] }[] = [];
  const tables: { shown: Shown; flags: string[] }[] = [];
  let last: Shown | undefined;
  const use = (snippet: string) => {
    const found = commandOf(snippet);
    if (!found) return;
    // A shell comment, pipe or next command ends the flags given to this one.
    const [given = ""] = found.rest.split(/\s#|\||&&|;/);
    uses.push({ shown: found.shown, flags: flagsIn(given) });
    last = found.shown;
  };
  let fenced = false;
  let table: { shown: Shown; flags: string[] } | undefined;
  const lines = text.replaceAll(/\\\n/g, " ").split("\n");
  let paragraph: string[] = [];
  const endParagraph = () => {
    for (const m of paragraph.join(" ").matchAll(/`([^`]+)`/g)) use(m[1] ?? "");
    paragraph = [];
  };
  for (const line of lines) {
    if (line.startsWith("```")) {
      endParagraph();
      fenced = !fenced;
      continue;
    }
    if (fenced) {
      use(line);
      continue;
    }
    if (line.startsWith("|")) {
      endParagraph();
      const first = line.split("|")[1]?.trim() ?? "";
      if (first === "flag") {
        table = last && { shown: last, flags: [] };
        if (table) tables.push(table);
      } else if (table && !/^-+$/.test(first)) {
        table.flags.push(...flagsIn(first));
      }
      continue;
    }
    table = undefined;
    if (line.trim() === "") endParagraph();
    else paragraph.push(line);
  }
  endParagraph();
  return { uses, tables };
}

describe("the commands the docs show", () => {
  it("exist, with every flag they are shown with", () => {
    const wrong: string[] = [];
    let seen = 0;
    for (const file of markdownFiles()) {
      const { uses, tables } = commandsOf(readFileSync(join(root, file), "utf8"));
      for (const { shown, flags } of [...uses, ...tables]) {
        seen++;
        if (!shown.flags) {
          wrong.push(`${file}: ${shown.command}: no such command`);
          continue;
        }
        for (const f of flags) {
          if (!shown.flags.has(f)) wrong.push(`${file}: ${shown.command} has no ${f}`);
        }
      }
    }
    expect(seen).toBeGreaterThan(10);
    expect(wrong).toEqual([]);
  });

  it("list every flag of a command in the table of its flags", () => {
    const missing: string[] = [];
    const tabulated = new Set<string>();
    for (const file of markdownFiles()) {
      for (const { shown, flags } of commandsOf(readFileSync(join(root, file), "utf8")).tables) {
        tabulated.add(shown.command);
        const listed = new Set(flags);
        for (const f of shown.flags ?? []) {
          if (f !== "--help" && !listed.has(f)) missing.push(`${file}: ${shown.command} ${f}`);
        }
      }
    }
    expect([...tabulated].sort()).toEqual(["npm run bench", "npm run chaos"]);
    expect(missing).toEqual([]);
  });

  it("find in configuration.md every flag of aidc-operator run", () => {
    const page = readFileSync(join(root, "docs/configuration.md"), "utf8");
    const named = new Set(flagsIn(page.replaceAll("`", " ")));
    const run = [...(cliFlags("run") ?? [])].filter((f) => f !== "--help");
    expect(run.length).toBeGreaterThan(20);
    expect(run.filter((f) => !named.has(f))).toEqual([]);
  });
});
