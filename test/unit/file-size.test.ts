import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

/** Source files stay readable in one sitting: split by concern before they grow past this. */
const MAX_LINES = 300;

const root = join(import.meta.dirname, "../..");

/** The TypeScript files under `dir`, tests (`*.test.ts`) and declarations excluded. */
function sourceFiles(dir: string): string[] {
  return readdirSync(join(root, dir), { recursive: true, encoding: "utf8" })
    .filter((f) => f.endsWith(".ts") && !f.endsWith(".test.ts") && !f.endsWith(".d.ts"))
    .map((f) => join(dir, f));
}

function lineCount(file: string): number {
  const text = readFileSync(join(root, file), "utf8");
  return text.split("\n").length - (text.endsWith("\n") ? 1 : 0);
}

describe("source file size", () => {
  it(`keeps every source file of src/ and scripts/ to ${MAX_LINES} lines at most`, () => {
    const files = [...sourceFiles("src"), ...sourceFiles("scripts")];
    expect(files.length).toBeGreaterThan(100);
    const over = files
      .map((file) => ({ file, lines: lineCount(file) }))
      .filter(({ lines }) => lines > MAX_LINES)
      .map(({ file, lines }) => `${file}: ${lines} lines`);
    expect(over).toEqual([]);
  });
});
