import { readdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { type ImportGraph, importGraphOf } from "../../scripts/import-cycles.js";

/**
 * The managed loop (src/controllers/managed) stays shallow: its longest chain of imports
 * inside the folder (test files aside) has at most 6 modules, as docs/architecture.md
 * describes the loop's levels.
 */

const MAX_LEVELS = 6;

/** The longest import chain from each module of an acyclic graph, as the modules in it. */
function longestChain(graph: ImportGraph): string[] {
  const memo = new Map<string, string[]>();
  const from = (node: string): string[] => {
    const known = memo.get(node);
    if (known) return known;
    let best: string[] = [];
    for (const next of graph.get(node) ?? []) {
      const chain = from(next);
      if (chain.length > best.length) best = chain;
    }
    const chain = [node, ...best];
    memo.set(node, chain);
    return chain;
  };
  let longest: string[] = [];
  for (const node of graph.keys()) {
    const chain = from(node);
    if (chain.length > longest.length) longest = chain;
  }
  return longest;
}

describe("longestChain", () => {
  it("counts the modules of the longest path, a diamond once per path", () => {
    const g = new Map(Object.entries({ a: ["b", "c"], b: ["d"], c: ["e"], e: ["d"], d: [] }));
    expect(longestChain(g)).toEqual(["a", "c", "e", "d"]);
  });
});

describe("src/controllers/managed", () => {
  it(`has at most ${MAX_LEVELS} levels of imports inside the folder`, () => {
    const dir = resolve(__dirname, "../../src/controllers/managed");
    const files = readdirSync(dir)
      .filter((f) => f.endsWith(".ts") && !f.endsWith(".test.ts"))
      .map((f) => join(dir, f));
    const chain = longestChain(importGraphOf(files, dir));
    expect(chain.length, `longest chain: ${chain.join(" -> ")}`).toBeLessThanOrEqual(MAX_LEVELS);
  });
});
