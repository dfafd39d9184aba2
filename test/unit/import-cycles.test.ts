import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { findImportCycles, importGraphOf, relativeImports } from "../../scripts/import-cycles.js";

/** The import-cycle check of `npm run lint` (scripts/import-cycles.ts). */

const graph = (edges: Record<string, string[]>) => new Map(Object.entries(edges));

describe("findImportCycles", () => {
  it("finds none in a graph without cycles (shared leaves and diamonds included)", () => {
    expect(findImportCycles(graph({ a: ["b", "c"], b: ["d"], c: ["d"], d: [], e: ["a"] }))).toEqual(
      [],
    );
  });

  it("finds two modules importing each other", () => {
    expect(findImportCycles(graph({ a: ["b"], b: ["a"], c: ["a"] }))).toEqual([["a", "b", "a"]]);
  });

  it("finds a longer cycle once, as a closed path from its first module", () => {
    expect(findImportCycles(graph({ x: ["y"], y: ["z"], z: ["x"], w: ["x"] }))).toEqual([
      ["x", "y", "z", "x"],
    ]);
  });

  it("finds a module importing itself", () => {
    expect(findImportCycles(graph({ a: ["a"], b: ["a"] }))).toEqual([["a", "a"]]);
  });

  it("reports each separate cycle, and a shortest path through a group of several", () => {
    const cycles = findImportCycles(
      graph({ a: ["b"], b: ["c", "a"], c: ["a"], p: ["q"], q: ["p"], r: ["p"] }),
    );
    expect(cycles).toEqual([
      ["a", "b", "a"],
      ["p", "q", "p"],
    ]);
  });

  it("ignores edges to modules outside the graph", () => {
    expect(findImportCycles(graph({ a: ["outside"] }))).toEqual([]);
  });
});

describe("relativeImports", () => {
  it("takes imports, type imports, re-exports, side-effect and dynamic imports; not packages", () => {
    const text = [
      'import { a } from "./a.js";',
      'import type { B } from "../b.js";',
      'export { c } from "./c.js";',
      'export type { D } from "./d.js";',
      'import "./side-effect.js";',
      'const e = await import("./e.js");',
      'import { z } from "zod";',
      'import { readFileSync } from "node:fs";',
      "import {\n  f,\n  type G,\n} from './f.js';",
    ].join("\n");
    expect(relativeImports(text).sort()).toEqual(
      ["../b.js", "./a.js", "./c.js", "./d.js", "./e.js", "./f.js", "./side-effect.js"].sort(),
    );
  });
});

describe("importGraphOf", () => {
  it("builds the graph of .ts files from their .js specifiers and finds a type-only cycle", () => {
    const dir = mkdtempSync(join(tmpdir(), "import-cycles-"));
    try {
      mkdirSync(join(dir, "sub"));
      writeFileSync(join(dir, "a.ts"), 'import { b } from "./sub/b.js";\nexport const a = b;\n');
      writeFileSync(
        join(dir, "sub", "b.ts"),
        'import type { A } from "../a.js";\nexport const b = 1;\n',
      );
      writeFileSync(join(dir, "c.ts"), 'import { a } from "./a.js";\nimport { z } from "zod";\n');
      const files = ["a.ts", "sub/b.ts", "c.ts"].map((f) => join(dir, f));
      const g = importGraphOf(files, dir);
      expect(Object.fromEntries(g)).toEqual({
        "a.ts": ["sub/b.ts"],
        "sub/b.ts": ["a.ts"],
        "c.ts": ["a.ts"],
      });
      expect(findImportCycles(g)).toEqual([["a.ts", "sub/b.ts", "a.ts"]]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
