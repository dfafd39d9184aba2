import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { allCrds, catalogCrds, REASONS } from "../crds/index.js";

/**
 * A reason a kind's controller writes as a literal (`reason: "Available"`) is one the
 * kind's definition declares (its own reasons, the shared rows it joins, or its group's):
 * conditions.md and troubleshooting.md list the kinds of each reason from those
 * declarations, so an undeclared one leaves the kind out of the docs.
 */
const FOLDER: Record<string, string> = { ServiceConnection: "connections" };

describe("the literal condition reasons of each kind's controller", () => {
  const kinds = allCrds.filter((c) => !catalogCrds.includes(c)).map((c) => c.kind);

  it.each(kinds)("%s: are declared for the kind", (kind) => {
    const dir = join(import.meta.dirname, FOLDER[kind] ?? kind.toLowerCase());
    expect(existsSync(dir)).toBe(true);
    const undeclared: string[] = [];
    for (const file of readdirSync(dir).filter(
      (f) => f.endsWith(".ts") && !f.endsWith(".test.ts"),
    )) {
      for (const m of readFileSync(join(dir, file), "utf8").matchAll(/reason: "(\w+)"/g)) {
        const kindsOf: readonly string[] = REASONS.entry(m[1] as string)?.kinds ?? [];
        if (!kindsOf.includes(kind)) undeclared.push(`${file}: ${m[1]}`);
      }
    }
    expect(undeclared).toEqual([]);
  });
});
