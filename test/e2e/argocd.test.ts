import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { parse, stringify } from "yaml";
import { root } from "../../scripts/generated-files.js";
import { allCrds } from "../../src/crds/index.js";
import {
  CHART_DIR,
  helmTemplate,
  installChartCrds,
  parseObjects,
  type RenderedObject,
  runTool,
} from "../support/chart.js";
import { ChartCopy } from "../support/chart-copy.js";
import { adminKubeConfig, createNamespace } from "../support/kube.js";

/**
 * The chart as Argo CD takes it: Argo CD runs no Helm release; it renders
 * `helm template --include-crds` on every refresh and compares the objects with the
 * cluster's. A value that changes between two renders (random, time-based) would show
 * the Application OutOfSync for ever, and `lookup` or `.Release.IsUpgrade` see no
 * cluster and no release there.
 */

/** A fenced YAML block of docs/install.md whose first line matches `first`. */
function installDocBlock(first: RegExp): string {
  const doc = readFileSync(join(root, "docs/install.md"), "utf8");
  const block = [...doc.matchAll(/```yaml\n([\s\S]*?)```/g)]
    .map((m) => m[1] ?? "")
    .find((b) => first.test(b.split("\n")[0] ?? ""));
  if (block === undefined) throw new Error(`no yaml block ${first} in docs/install.md`);
  return block;
}

/** The Application of docs/install.md's "The operator as an Application". */
interface DocumentedApplication {
  metadata: { name: string };
  spec: {
    source: { path: string; helm: { releaseName: string; valuesObject: unknown } };
    destination: { namespace: string };
    syncPolicy: { syncOptions?: string[] };
  };
}

function documentedApplication(): DocumentedApplication {
  return parse(installDocBlock(/^# argocd-application\.yaml/));
}

/** The values sets the docs name: `--set` maps, or the text of a values file. */
const VALUE_SETS: {
  name: string;
  set?: Record<string, string | number | boolean>;
  file?: () => string;
}[] = [
  { name: "the defaults", set: {} },
  {
    name: "every option on",
    set: {
      apiKeySecret: "my-key",
      "watchNamespaces[0]": "team-a",
      "watchNamespaces[1]": "team-b",
      "serviceMonitor.enabled": true,
      "prometheusRule.enabled": true,
      "dashboards.enabled": true,
      "networkPolicy.enabled": true,
      "exposure.enabled": true,
      replicas: 3,
      "shards[0]": "team-a",
      "connections.secretNamespace": "keys",
      "connections.create.name": "team-a",
      "connections.create.baseUrl": "https://team-a.example",
      "connections.create.apiKeySecret.name": "team-a-key",
      "objectStorage.endpoint": "https://s3.example.com",
      "objectStorage.credentialsSecret.name": "s3-keys",
    },
  },
  {
    name: "delete-operations.yaml of docs/install.md",
    file: () => installDocBlock(/^# delete-operations\.yaml/),
  },
  {
    name: "the Application of docs/install.md",
    file: () => stringify(documentedApplication().spec.source.helm.valuesObject),
  },
];

describe("the chart rendered as Argo CD renders it", () => {
  const dir = mkdtempSync(join(tmpdir(), "aidc-argocd-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  /** `helm template --include-crds` of one values set, with `extra` arguments. */
  const render = (values: (typeof VALUE_SETS)[number], extra: string[] = []) => {
    const args = ["--include-crds", ...extra];
    if (values.file) {
      const file = join(dir, "values.yaml");
      writeFileSync(file, values.file());
      args.push("--values", file);
    }
    return helmTemplate("aidc-operator", "aidc-system", values.set ?? {}, args);
  };

  it("renders byte-identical objects twice, and the same as an upgrade, for every documented values set", async () => {
    for (const values of VALUE_SETS) {
      const first = await render(values);
      expect(await render(values), values.name).toBe(first);
      // Argo CD renders every sync as an install; Helm would render an upgrade.
      expect(await render(values, ["--is-upgrade"]), values.name).toBe(first);
      expect(parseObjects(first).length, values.name).toBeGreaterThan(allCrds.length);
    }
  });

  it("includes every CRD, each marked Prune=false, so that Argo CD never prunes one", async () => {
    const crds = parseObjects(await render(VALUE_SETS[0] as (typeof VALUE_SETS)[number])).filter(
      (o) => o.kind === "CustomResourceDefinition",
    );
    expect(crds.map((c) => c.metadata.name).sort()).toEqual(
      allCrds.map((d) => `${d.plural}.${d.group}`).sort(),
    );
    for (const crd of crds) {
      expect(crd.metadata.annotations?.["argocd.argoproj.io/sync-options"]).toBe("Prune=false");
    }
  });

  it("documents an Application of the chart as Argo CD takes it, with no sync option it does not need", () => {
    const app = documentedApplication();
    expect(app.spec.source.path).toBe(CHART_DIR);
    // Label tracking writes the Application's name where the ServiceMonitor selects the release's.
    expect(app.spec.source.helm.releaseName).toBe(app.metadata.name);
    expect(app.metadata.name).toBe("aidc-operator");
    expect(app.spec.destination.namespace).toBe("aidc-system");
    // Client-side apply takes every CRD (src/cli/crds.test.ts checks their size).
    expect(app.spec.syncPolicy.syncOptions ?? []).not.toContain("ServerSideApply=true");
  });

  it("selects the metrics Service by app.kubernetes.io/instance, which label tracking overwrites", async () => {
    const objects = parseObjects(
      await helmTemplate("aidc-operator", "aidc-system", { "serviceMonitor.enabled": true }),
    );
    const monitor = objects.find((o) => o.kind === "ServiceMonitor");
    const spec = monitor?.spec as { selector: { matchLabels: Record<string, string> } } | undefined;
    const selector = spec?.selector.matchLabels ?? {};
    expect(selector["app.kubernetes.io/instance"]).toBe("aidc-operator");
    const service = objects.find((o) => o.kind === "Service");
    expect(service?.metadata.labels).toMatchObject(selector);
  });

  /**
   * Argo CD compares the fields a manifest sets with the live object's: one the API server
   * drops or rewrites (beyond what Argo CD normalizes, such as quantities) shows the
   * Application OutOfSync after every sync.
   */
  it("finds every rendered field unchanged once applied client-side: nothing for Argo CD's diff to show", async () => {
    await installChartCrds();
    const namespace = await createNamespace(adminKubeConfig(), "argo-diff");
    const copy = new ChartCopy("argodiff");
    const crds = readdirSync(copy.crdsDir).map((f) => readFileSync(join(copy.crdsDir, f), "utf8"));
    const rendered = await helmTemplate("aidc-operator", namespace, {
      "watchNamespaces[0]": namespace,
      "networkPolicy.enabled": true,
      "exposure.enabled": true,
      "shards[0]": "team-a",
      "connections.create.name": `argodiff-${namespace}`,
      "connections.create.baseUrl": "https://team-a.example",
      "connections.create.apiKeySecret.name": "team-a-key",
    });
    // Argo CD applies all but the hooks; the CRDs of a copy, since the shared ones stay.
    const objects = rendered.split(/^---$/m).filter((d) => {
      const [o] = parseObjects(d);
      return o !== undefined && !o.metadata.annotations?.["helm.sh/hook"];
    });
    const stream = [...crds, ...objects].join("\n---\n");
    try {
      await runTool("kubectl", ["apply", "-f", "-"], stream);
      const { stdout } = await runTool("kubectl", ["get", "-f", "-", "-o", "json"], stream);
      const live = (JSON.parse(stdout) as { items: RenderedObject[] }).items;
      const expected = parseObjects(stream);
      expect(live.map((o) => o.metadata.name)).toEqual(expected.map((o) => o.metadata.name));
      expected.forEach((o, i) => {
        expect(live[i], `${o.kind} ${o.metadata.name}`).toMatchObject(o);
      });
    } finally {
      // The CRDs are left to copy.remove(), which deletes them once they serve.
      const applied = objects.join("\n---\n");
      await runTool("kubectl", ["delete", "--ignore-not-found", "-f", "-"], applied).catch(
        () => undefined,
      );
      await copy.remove();
    }
  });

  it("calls lookup, IsInstall, IsUpgrade or a random or time function in NOTES.txt alone", () => {
    const templates = join(root, CHART_DIR, "templates");
    const renderTime =
      /\b(lookup|IsInstall|IsUpgrade|Revision|now|date|dateInZone|unixEpoch|rand\w*|uuidv4|gen\w+)\b/;
    const using = readdirSync(templates).filter((f) => {
      const actions = readFileSync(join(templates, f), "utf8").match(/{{[\s\S]*?}}/g) ?? [];
      return actions.some((a) =>
        renderTime.test(a.replace(/\/\*[\s\S]*?\*\//g, "").replace(/"[^"]*"/g, "")),
      );
    });
    expect(using).toEqual(["NOTES.txt"]);
  });
});
