import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { isBuiltin } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { build, type Metafile } from "esbuild";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BUNDLE_FILE_MAX_BYTES, bundleOptions } from "../../scripts/bundle-dist.js";
import { root } from "../../scripts/generated-files.js";

/**
 * The production bundle (scripts/bundle-dist.ts, what the image runs) holds the
 * operator only: bundled here from src/cli/main.ts with the build's own options, its
 * inputs (esbuild's metafile, every source file in any chunk, on-demand ones included)
 * hold no emulator, local control plane or playground code; the image copies only the
 * bundle of dist/, so tsc's output of those does not reach it either.
 */
describe("the production bundle", () => {
  let inputs: string[] = [];
  let inputImports: Metafile["inputs"] = {};
  let outputs: Metafile["outputs"] = {};
  let outdir = "";

  beforeAll(async () => {
    outdir = mkdtempSync(join(tmpdir(), "aidc-bundle-"));
    const result = await build({
      ...bundleOptions(join(root, "src/cli/main.ts"), outdir),
      write: false,
      metafile: true,
      absWorkingDir: root,
    });
    inputs = Object.keys(result.metafile.inputs);
    inputImports = result.metafile.inputs;
    outputs = result.metafile.outputs;
  }, 60_000);
  afterAll(() => rmSync(outdir, { recursive: true, force: true }));

  it("bundles the operator: the run command, the controllers and the service client", () => {
    expect(inputs).toEqual(
      expect.arrayContaining(["src/cli/run.ts", "src/runtime/manager.ts", "src/service/client.ts"]),
    );
  });

  it("holds no emulator, local control plane or playground code", () => {
    expect(
      inputs.filter((f) =>
        /^src\/(emulator|controlplane)\/|^src\/cli\/(dev|dev-command|emulator|controlplane|repo-main)\.ts$/.test(
          f,
        ),
      ),
    ).toEqual([]);
  });

  it("has no big file: the libraries of SEPARATE_LIBRARIES are files of their own", () => {
    const js = Object.entries(outputs).filter(([file]) => file.endsWith(".js"));
    expect(js.length).toBeGreaterThan(5);
    const big = js
      .filter(([, o]) => o.bytes > BUNDLE_FILE_MAX_BYTES)
      .map(([file, o]) => `${file}: ${o.bytes}`);
    expect(big).toEqual([]);
  });

  it("loads from node_modules only production dependencies, which the image installs alone", () => {
    const { dependencies } = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as {
      dependencies: Record<string, string>;
    };
    // `@scope/name/sub/path` and `name/sub/path` are packages `@scope/name` and `name`.
    const packageOf = (spec: string) =>
      spec
        .split("/")
        .slice(0, spec.startsWith("@") ? 2 : 1)
        .join("/");
    const loaded = new Set(
      Object.values(outputs)
        .flatMap((o) => o.imports)
        .filter((i) => i.external && !isBuiltin(i.path))
        .map((i) => packageOf(i.path)),
    );
    expect([...loaded]).toEqual(
      expect.arrayContaining(["@kubernetes/client-node", "@aws-sdk/client-s3"]),
    );
    expect([...loaded].filter((name) => !(name in dependencies))).toEqual([]);
  });

  it("reads a CommonJS package the CLI imports on demand through `.default`, its only export once bundled", () => {
    // Node gives such a module's namespace named exports too; the bundle's chunk only
    // `default` (module.exports), so `const { X } = await import("pkg")` is undefined there.
    const onDemand = Object.entries(inputImports).flatMap(([file, input]) =>
      input.imports
        .filter((i) => i.kind === "dynamic-import" && !i.external && file.startsWith("src/"))
        .filter((i) => !i.original?.startsWith("."))
        .map((i) => ({ file, spec: i.original ?? "", resolved: i.path })),
    );
    const cjs = onDemand.filter(({ resolved }) => {
      const chunk = Object.values(outputs).find((o) => o.entryPoint === resolved);
      return chunk?.exports.length === 1 && chunk.exports[0] === "default";
    });
    expect(cjs.map((c) => c.spec)).toContain("undici");
    const unread = cjs.flatMap(({ file, spec }) => {
      const text = readFileSync(join(root, file), "utf8");
      const all = text.split(`import("${spec}")`).length - 1;
      const read = text.split(`(await import("${spec}")).default`).length - 1;
      return all === read ? [] : [`${file}: import("${spec}")`];
    });
    expect(unread).toEqual([]);
  });

  it("is all the image takes of dist/", () => {
    const dockerfile = readFileSync(join(root, "Dockerfile"), "utf8");
    const fromBuild = dockerfile.split("\n").filter((l) => /^COPY --from=build\b/.test(l));
    expect(fromBuild).toEqual(["COPY --from=build --chown=0:0 /src/dist/bundle ./dist/bundle"]);
  });
});
