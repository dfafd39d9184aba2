/**
 * `aidc-operator run` (the image's command) loads only what it needs: main.ts and
 * everything it imports statically must not reach the emulator, the local control
 * plane or the playground, which other subcommands load on demand (dynamic import).
 */
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const src = resolve(import.meta.dirname, "..");

/** Relative modules a file imports statically (`import ... from`, `export ... from`). */
function staticImports(file: string): string[] {
  const text = readFileSync(file, "utf8");
  const out: string[] = [];
  for (const m of text.matchAll(
    /(?:^|\n)\s*(?:import|export)\s[^'"]*?from\s+["'](\.[^"']+)["']/g,
  )) {
    // `import type` is erased by the compiler: it loads nothing.
    if (/^\s*(?:import|export)\s+type\s/.test(m[0])) continue;
    const target = resolve(dirname(file), (m[1] as string).replace(/\.js$/, ".ts"));
    if (existsSync(target)) out.push(target);
  }
  return out;
}

/** Every source file reachable from `entry` through static imports. */
function reachable(entry: string): Set<string> {
  const seen = new Set<string>();
  const todo = [entry];
  while (todo.length > 0) {
    const file = todo.pop() as string;
    if (seen.has(file)) continue;
    seen.add(file);
    todo.push(...staticImports(file));
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

  /**
   * The emulator's settings declarations (names, defaults, descriptions: data that the
   * emulator command's flags are registered from) are the one part of the emulator
   * `main.ts` may load; they import nothing but each other.
   */
  const settingsDeclarations =
    /^emulator\/(kind-settings|kinds\/settings-index|kinds\/[a-z0-9-]+\.settings)\.ts$/;

  it("include neither the emulator, the local control plane nor the playground", () => {
    expect(
      loaded.filter(
        (f) => /^(emulator|controlplane)\/|^cli\/dev\.ts$/.test(f) && !settingsDeclarations.test(f),
      ),
    ).toEqual([]);
  });

  it("load of the emulator only its settings declarations, which import nothing else", () => {
    const declarations = loaded.filter((f) => settingsDeclarations.test(f));
    for (const f of declarations) {
      const imported = staticImports(join(src, f)).map((t) => relative(src, t));
      expect(
        imported.filter((t) => !settingsDeclarations.test(t)),
        f,
      ).toEqual([]);
    }
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
