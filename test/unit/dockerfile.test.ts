import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { builtinModules } from "node:module";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { BUNDLE_ENTRY } from "../../scripts/bundle-dist.js";
import { root } from "../../scripts/generated-files.js";
import { copyProblems, parseDockerfile, repositoryDockerfile } from "../support/dockerfile.js";
import { IMAGE_NODE_ARGS } from "../support/operator-process.js";

/**
 * The image cannot be built here (no container engine), so these tests hold the
 * Dockerfile to what the rest of the repository says: the entry point is the package's
 * bin, the final stage has the production dependencies only and every package the
 * compiled code imports is one of them, and the user is the one the chart runs as.
 */

const dockerfile = readFileSync(join(root, "Dockerfile"), "utf8");
const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as {
  type: string;
  bin: Record<string, string>;
  scripts: Record<string, string>;
  dependencies: Record<string, string>;
};

/** The Dockerfile's logical lines (continuations joined). */
const lines = dockerfile.replace(/\\\n/g, " ").split("\n");

/** The `ARG name=default` values declared before the first FROM. */
const globalArgs = new Map(
  lines
    .slice(
      0,
      lines.findIndex((l) => /^FROM\s/i.test(l)),
    )
    .flatMap((l) => {
      const m = /^ARG\s+([A-Za-z_]+)=(\S+)\s*$/.exec(l);
      return m ? [[m[1] as string, m[2] as string] as const] : [];
    }),
);

/** The image each FROM names, with `${ARG}` resolved, and the stage's name. */
function stages(): { image: string; name?: string }[] {
  return lines.flatMap((l) => {
    const m = /^FROM\s+(\S+)(?:\s+AS\s+(\S+))?\s*$/i.exec(l);
    if (!m) return [];
    const image = (m[1] as string).replace(/^\$\{(\w+)\}$/, (_, n: string) => {
      const v = globalArgs.get(n);
      if (v === undefined) throw new Error(`FROM names \${${n}} without a default`);
      return v;
    });
    return [{ image, ...(m[2] ? { name: m[2] } : {}) }];
  });
}

/** The instructions of the last stage (after the last FROM). */
function finalStage(): string[] {
  const lastFrom = lines.map((l) => /^FROM\s/i.test(l)).lastIndexOf(true);
  return lines.slice(lastFrom).filter((l) => l.trim() && !l.trim().startsWith("#"));
}

function* sourceFiles(dir: string): Generator<string> {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) yield* sourceFiles(path);
    else if (path.endsWith(".ts") && !path.endsWith(".test.ts")) yield path;
  }
}

describe("the Dockerfile", () => {
  it("runs the package's bin with the run command, and Node's options the bench runs it with", () => {
    const stage = finalStage().join("\n");
    // The distroless base has no `node` on a PATH a shell would search: its binary by path.
    const entry = ["/nodejs/bin/node", ...IMAGE_NODE_ARGS, pkg.bin["aidc-operator"]];
    expect(stage).toContain(`ENTRYPOINT [${entry.map((a) => `"${a}"`).join(", ")}]`);
    expect(stage).toContain('CMD ["run"]');
    expect(pkg.type).toBe("module");
    expect(stage).toMatch(/COPY[^\n]* package\.json \.\//);
  });

  it("builds with npm run build, which compiles to dist/ and bundles into dist/bundle/, the bin", () => {
    expect(dockerfile).toMatch(/RUN npm run build/);
    expect(pkg.scripts.build).toBe("tsc -p tsconfig.build.json && tsx scripts/bundle-dist.ts");
    expect(dockerfile).toMatch(/COPY scripts\/bundle-dist\.ts \.\/scripts\//);
    expect(pkg.bin["aidc-operator"]).toBe(`dist/${BUNDLE_ENTRY}`);
    const build = JSON.parse(readFileSync(join(root, "tsconfig.build.json"), "utf8")) as {
      compilerOptions: { outDir: string };
    };
    expect(build.compilerOptions.outDir).toBe("dist");
  });

  it("ships production dependencies only, installed with npm ci --omit=dev", () => {
    expect(dockerfile).toMatch(/npm ci --omit=dev/);
    const copies = finalStage().filter((l) => l.startsWith("COPY"));
    const fromDeps = copies.find((l) => l.includes("node_modules"));
    expect(fromDeps).toMatch(/--from=production-deps/);
    expect(finalStage().some((l) => /npm ci(?!.*--omit=dev)/.test(l))).toBe(false);
  });

  it("runs on a distroless Node 24 base pinned by digest: no shell, so no RUN in the final stage", () => {
    const all = stages();
    expect(all.length).toBeGreaterThanOrEqual(2);
    const final = all.at(-1)?.image ?? "";
    expect(final).toMatch(/^gcr\.io\/distroless\/nodejs24-debian12:nonroot@sha256:[0-9a-f]{64}$/);
    // Every external base is pinned (a stage may start from an earlier stage by name).
    const names = new Set(all.flatMap((s) => (s.name ? [s.name] : [])));
    for (const { image } of all) {
      if (!names.has(image)) expect(image).toMatch(/@sha256:[0-9a-f]{64}$/);
    }
    expect(all.slice(0, -1).every((s) => /^node:24[.-]/.test(s.image))).toBe(true);
    // Exec form only: a shell-form ENTRYPOINT, CMD or RUN needs /bin/sh, which is absent.
    const stage = finalStage();
    expect(stage.filter((l) => /^RUN\s/i.test(l))).toEqual([]);
    for (const l of stage.filter((x) => /^(ENTRYPOINT|CMD)\s/i.test(x))) {
      expect(l).toMatch(/^(ENTRYPOINT|CMD)\s+\[/);
    }
  });

  it("runs as uid 65532, the user the chart's securityContext names", () => {
    expect(finalStage()).toContain("USER 65532:65532");
    // The Deployment's pod template, wherever the chart keeps it (a template or a helper).
    const templates = join(root, "charts/aidc-operator/templates");
    const pod = readdirSync(templates)
      .filter((f) => /^_?deployment\.(yaml|tpl)$/.test(f))
      .map((f) => readFileSync(join(templates, f), "utf8"))
      .join("\n");
    expect(pod).toContain("runAsUser: 65532");
  });

  it("has every package that src imports among the production dependencies", () => {
    const builtins = new Set(builtinModules);
    const missing: string[] = [];
    const importRe = /^\s*(?:import|export)\s(?!type\s)[^'"]*?from\s+["']([^"'.][^"']*)["']/gm;
    for (const file of sourceFiles(join(root, "src"))) {
      for (const m of readFileSync(file, "utf8").matchAll(importRe)) {
        const spec = m[1] ?? "";
        if (spec.startsWith("node:") || builtins.has(spec)) continue;
        const name = spec.startsWith("@")
          ? spec.split("/").slice(0, 2).join("/")
          : (spec.split("/")[0] ?? "");
        if (!(name in pkg.dependencies)) missing.push(`${relative(root, file)}: ${name}`);
      }
    }
    expect(missing).toEqual([]);
  });

  it("keeps everything but the manifests, the TypeScript configs, src/ and the bundling script out of the context", () => {
    const lines = readFileSync(join(root, ".dockerignore"), "utf8")
      .split("\n")
      .filter((l) => l.trim() && !l.startsWith("#"));
    expect(lines[0]).toBe("*");
    for (const path of [
      "package.json",
      "package-lock.json",
      "tsconfig.json",
      "tsconfig.build.json",
      "src/",
      "scripts/bundle-dist.ts",
    ]) {
      expect(lines).toContain(`!${path}`);
    }
  });

  it("matches the chart's default metrics port", () => {
    const values = parse(readFileSync(join(root, "charts/aidc-operator/values.yaml"), "utf8")) as {
      metricsPort: number;
    };
    expect(finalStage()).toContain(`EXPOSE ${values.metricsPort}`);
  });

  it("copies only what the build produces, and everything the entry point needs", () => {
    const { stages, ignore } = repositoryDockerfile(root);
    expect(copyProblems(stages, ignore, root, existsSync)).toEqual([]);
    // The same check fails on a Dockerfile that copies what no stage makes, misses what
    // the image needs, or copies a file the context keeps out.
    const broken = (from: string, to: string) => {
      expect(dockerfile, from).toContain(from);
      return copyProblems(parseDockerfile(dockerfile.replace(from, to)), ignore, root, existsSync);
    };
    expect(broken("/src/dist/bundle ./dist/bundle", "/src/out/bundle ./dist/bundle")).toEqual([
      expect.stringMatching(/^COPY --from=build \/src\/out\/bundle: the stage does not produce it/),
    ]);
    expect(broken("/src/dist/bundle ./dist/bundle", "/src/dist/bundle ./lib")).toEqual([
      "the final stage lacks /app/dist/bundle/main.js",
    ]);
    expect(broken("/app/node_modules ./node_modules", "/app/node_modules ./vendor")).toEqual([
      "the final stage lacks /app/node_modules",
    ]);
    expect(broken("COPY scripts/bundle-dist.ts", "COPY scripts/generated-files.ts")).toEqual([
      "COPY scripts/generated-files.ts: .dockerignore keeps it out",
    ]);
  });
});
