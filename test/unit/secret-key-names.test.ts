import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { parse, parseAllDocuments } from "yaml";
import { root } from "../../scripts/generated-files.js";
import { API_KEY_SECRET_KEY } from "../../src/crds/serviceconnection.js";

/**
 * One name for the key of an API-key Secret's data everywhere a user meets it: a
 * ServiceConnection's default (`API_KEY_SECRET_KEY`), the chart's values and templates,
 * the samples and every `kubectl create secret` of the docs. A user who creates the
 * Secret once, by the docs, can point the chart and a ServiceConnection at it.
 */

const read = (path: string) => readFileSync(join(root, path), "utf8");

/** Every file under `dir` whose name ends with `suffix` (node_modules and .git aside). */
function filesUnder(dir: string, suffix: string): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith(suffix))
    .map((e) => relative(root, join(e.parentPath, e.name)))
    .filter((p) => !p.split("/").some((part) => part === "node_modules" || part.startsWith(".")));
}

describe("the API-key Secret's key name", () => {
  it("is a ServiceConnection's default and the chart's, for the operator's and a created connection's Secret", () => {
    expect(API_KEY_SECRET_KEY).toBe("apiKey");
    const values = parse(read("charts/aidc-operator/values.yaml")) as {
      apiKeySecret: { key: string };
      connections: { create: { apiKeySecret: { key: string } } };
    };
    expect(values.apiKeySecret.key).toBe(API_KEY_SECRET_KEY);
    expect(values.connections.create.apiKeySecret.key).toBe(API_KEY_SECRET_KEY);
    // The chart's fallbacks (a Secret given by name only, or an object without key).
    const helpers = read("charts/aidc-operator/templates/_helpers.tpl");
    const start = helpers.indexOf('define "aidc-operator.apiKeySecretKey"');
    const define = helpers.slice(helpers.indexOf("}}", start) + 2);
    const body = define.slice(0, define.indexOf("{{- end }}\n{{- end }}"));
    const literals = [...body.matchAll(/(?:\{\{- |default )"([^"]+)"/g)].map((m) => m[1]);
    expect(literals.length).toBeGreaterThan(0);
    expect(new Set(literals)).toEqual(new Set([API_KEY_SECRET_KEY]));
  });

  it("is the one every `kubectl create secret` of the docs writes an API key under", () => {
    const docs = [...filesUnder(".", ".md"), "charts/aidc-operator/templates/NOTES.txt"];
    const found: string[] = [];
    for (const path of docs) {
      for (const m of read(path).matchAll(/--from-literal=([^=\s]+)=(.*)$/gm)) {
        if (!/api.?key/i.test(m[2] ?? "")) continue;
        found.push(`${path}: ${m[1]}`);
      }
    }
    expect(found.length).toBeGreaterThan(0);
    const other = found.filter(
      (f) => !f.endsWith(`: ${API_KEY_SECRET_KEY}`) && !f.includes("apiKeySecretKey"),
    );
    expect(other).toEqual([]);
  });

  it("is the one the samples' ServiceConnections name", () => {
    const samples = filesUnder("deploy/samples", ".yaml");
    const keys = samples.flatMap((path) =>
      parseAllDocuments(read(path))
        .map((d) => d.toJS() as { kind?: string; spec?: { apiKeySecretRef?: { key?: string } } })
        .filter((o) => o?.kind === "ServiceConnection")
        .map((o) => `${path}: ${o.spec?.apiKeySecretRef?.key ?? API_KEY_SECRET_KEY}`),
    );
    expect(keys.length).toBeGreaterThan(0);
    expect(keys.filter((k) => !k.endsWith(`: ${API_KEY_SECRET_KEY}`))).toEqual([]);
  });
});
