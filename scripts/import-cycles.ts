/**
 * Import cycles among the modules of src/ (run by scripts/check-layers.ts, so by
 * `npm run lint`). A cycle makes module load order matter (a value read before its
 * module finished loading is undefined) and means the two sides share something that
 * has no home of its own: move it to a module whose name says what it is.
 *
 * Every relative import counts (import-specifiers.ts): `import type` too (it is erased
 * at run time, but the two modules still depend on each other, which is what the check
 * is about), re-exports (`export ... from`), side-effect and dynamic imports.
 */
import { readFileSync } from "node:fs";
import { dirname, relative, resolve } from "node:path";
import { importSpecifiers } from "./import-specifiers.js";

/** Module → the modules it imports (both as paths, or any names for a test graph). */
export type ImportGraph = ReadonlyMap<string, readonly string[]>;

/** The relative imports of a module's source text, as written (`./a.js`). */
export function relativeImports(text: string): string[] {
  return importSpecifiers(text).filter((spec) => spec.startsWith("."));
}

/**
 * The import graph of `files` (absolute paths of .ts modules): edges to the .ts file a
 * `./x.js` specifier names, kept only when that file is among `files`. Node names are
 * paths relative to `base`.
 */
export function importGraphOf(files: readonly string[], base: string): Map<string, string[]> {
  const known = new Set(files);
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const targets = relativeImports(readFileSync(file, "utf8"))
      .map((spec) => resolve(dirname(file), spec.replace(/\.js$/, ".ts")))
      .filter((target) => known.has(target))
      .map((target) => relative(base, target));
    graph.set(relative(base, file), [...new Set(targets)]);
  }
  return graph;
}

/**
 * Every import cycle of `graph`, one per strongly connected group of modules (Tarjan's
 * algorithm), each given as one closed path through the group: `[a, b, a]` for a
 * module and the one it imports that imports it back. A module importing itself is a
 * cycle too. Sorted, so that the output is stable.
 */
export function findImportCycles(graph: ImportGraph): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const groups: string[][] = [];
  const edges = (n: string) => graph.get(n) ?? [];

  const visit = (node: string): void => {
    index.set(node, index.size);
    low.set(node, index.get(node) ?? 0);
    stack.push(node);
    onStack.add(node);
    for (const next of edges(node)) {
      if (!index.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node) ?? 0, low.get(next) ?? 0));
      } else if (onStack.has(next)) {
        low.set(node, Math.min(low.get(node) ?? 0, index.get(next) ?? 0));
      }
    }
    if (low.get(node) !== index.get(node)) return;
    const group: string[] = [];
    for (let n = stack.pop(); n !== undefined; n = stack.pop()) {
      onStack.delete(n);
      group.push(n);
      if (n === node) break;
    }
    if (group.length > 1 || edges(node).includes(node)) groups.push(group);
  };

  for (const node of [...graph.keys()].sort()) if (!index.has(node)) visit(node);
  return groups
    .map((group) => cycleThrough(group, edges))
    .sort((a, b) => a.join().localeCompare(b.join()));
}

/** A shortest closed path from the group's first module (by name) back to it, inside the group. */
function cycleThrough(group: string[], edges: (n: string) => readonly string[]): string[] {
  const members = new Set(group);
  const start = [...group].sort()[0] ?? "";
  // Breadth-first from start's successors until start is reached again.
  const cameFrom = new Map<string, string>();
  const queue: string[] = [start];
  while (queue.length > 0) {
    const node = queue.shift() ?? "";
    for (const next of edges(node)) {
      if (!members.has(next)) continue;
      if (next === start) {
        const path = [start];
        for (
          let n: string | undefined = node;
          n !== start && n !== undefined;
          n = cameFrom.get(n)
        ) {
          path.unshift(n);
        }
        return [start, ...path];
      }
      if (!cameFrom.has(next)) {
        cameFrom.set(next, node);
        queue.push(next);
      }
    }
  }
  return [start, start];
}
