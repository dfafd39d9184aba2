/**
 * The production CLI (main.ts, what the image runs) loads only the operator: neither it
 * nor anything it imports, statically or on demand, reaches the emulator, the local
 * control plane or the playground, which the repository's CLI (repo-main.ts) adds.
 */
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const src = resolve(import.meta.dirname, "..");

/**
 * Relative modules a file imports statically (`import ... from`, `export ... from`),
 * and with `dynamic` also on demand (`import("...")`).
 */
function imports(file: string, dynamic = false): string[] {
  const text = readFileSync(file, "utf8");
  const out: string[] = [];
  const pattern = dynamic
    ? /(?:^|\n)\s*(?:import|export)\s[^'"]*?from\s+["'](\.[^"']+)["']|import\(\s*["'](\.[^"']+)["']\s*\)/g
    : /(?:^|\n)\s*(?:import|export)\s[^'"]*?from\s+["'](\.[^"']+)["']/g;
  for (const m of text.matchAll(pattern)) {
    // `import type` is erased by the compiler: it loads nothing.
    if (/^\s*(?:import|export)\s+type\s/.test(m[0])) continue;
    const spec = (m[1] ?? m[2]) as string;
    const target = resolve(dirname(file), spec.replace(/\.js$/, ".ts"));
    if (existsSync(target)) out.push(target);
  }
  return out;
}

/** Every source file reachable from `entry` through static imports (with `dynamic`, any import). */
function reachable(entry: string, dynamic = false): Set<string> {
  const seen = new Set<string>();
  const todo = [entry];
  while (todo.length > 0) {
    const file = todo.pop() as string;
    if (seen.has(file)) continue;
    seen.add(file);
    todo.push(...imports(file, dynamic));
  }
  return seen;
}

describe("the modules `aidc-operator run` loads", () => {
  const loaded = [...reachable(join(src, "cli/main.ts"))].map((f) => relative(src, f));

  it("include the runtime, the controllers and the service client", () => {
    expect(loaded).toContain("cli/run.ts");
    expect(loaded).toContain("runtime/manager.ts");
    expect(loaded).toContain("service/client.ts");
  });

  /** Every module reachable from `entry`, dynamic imports included. */
  const everything = (entry: string) =>
    [...reachable(join(src, entry), true)].map((f) => relative(src, f));
  const developmentTools = (files: string[]) =>
    files.filter((f) =>
      /^(emulator|controlplane)\/|^cli\/(dev|dev-command|emulator|controlplane)\.ts$/.test(f),
    );

  it("include neither the emulator, the local control plane nor the playground, even on demand", () => {
    expect(developmentTools(everything("cli/main.ts"))).toEqual([]);
  });

  it("are those of the repository's CLI, which adds the development tools", () => {
    const repo = everything("cli/repo-main.ts");
    expect(repo).toEqual(
      expect.arrayContaining(everything("cli/main.ts").filter((f) => f !== "cli/main.ts")),
    );
    expect(developmentTools(repo)).toEqual(
      expect.arrayContaining(["emulator/server.ts", "controlplane/controlplane.ts", "cli/dev.ts"]),
    );
  });

  /**
   * Libraries that `run` loads only when it needs them (dynamic import), with what they
   * would cost at start: none of the files `run` loads may import them statically.
   */
  const loadedOnDemand: Record<string, string> = {
    // kube-config.ts imports it only for what it cannot load itself.
    "@kubernetes/client-node": "its generated API models cost ~80 MiB",
    // bucket/storage.ts imports the S3 client with the first Bucket's storage client.
    "@aws-sdk/client-s3": "~20 MiB of resident memory at start",
    // service/transport.ts imports it with the first call when service.httpClient is node-fetch.
    "node-fetch":
      "its web objects (fetch-blob, formdata) are not needed by the default node:http client",
  };

  for (const [pkg, why] of Object.entries(loadedOnDemand)) {
    it(`do not import ${pkg} statically (${why})`, () => {
      const quoted = pkg.replace(/[/.]/g, "\\$&");
      const importFrom = new RegExp(
        `(?:^|\\n)\\s*(?:import|export)\\s[^'"]*?from\\s+["']${quoted}["']`,
        "g",
      );
      const importers = loaded.filter((f) =>
        [...readFileSync(join(src, f), "utf8").matchAll(importFrom)].some(
          (m) => !/^\s*(?:import|export)\s+type\s/.test(m[0]),
        ),
      );
      expect(importers).toEqual([]);
    });
  }
});
