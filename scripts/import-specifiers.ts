/**
 * The module specifiers a TypeScript module's source imports, for the lint checks on
 * src/ (layer rules in layer-rules.ts, import cycles in import-cycles.ts): one parser
 * for both, so that neither misses a form of import the other sees.
 */

/**
 * At the start of a line: `import … from "x"` and `export … from "x"` (type-only ones
 * too, their clause over several lines or not), and the side-effect `import "x"`;
 * anywhere: the dynamic `import("x")`.
 */
const importRe =
  /(?:^|\n)\s*(?:import|export)\s[^'"]*?from\s+["']([^"']+)["']|(?:^|\n)\s*import\s+["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)/g;

/** Every specifier `text` imports or re-exports from, as written (`./a.js`, `zod`), in order. */
export function importSpecifiers(text: string): string[] {
  const specs: string[] = [];
  for (const m of text.matchAll(importRe)) {
    const spec = m[1] ?? m[2] ?? m[3];
    if (spec) specs.push(spec);
  }
  return specs;
}
