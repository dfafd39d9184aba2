import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { loadKubeConfig } from "./kube-config.js";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "kube-config-files-"));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

async function optionsOf(config: Awaited<ReturnType<typeof loadKubeConfig>>) {
  const opts: Record<string, unknown> & { headers?: Record<string, unknown> } = { headers: {} };
  await config.applyToHTTPSOptions(opts);
  return opts;
}

/** Writes `doc` as `name` under a directory of its own; returns the file. */
async function file(sub: string, doc: object): Promise<string> {
  await mkdir(join(dir, sub), { recursive: true });
  const path = join(dir, sub, "config");
  await writeFile(path, stringify(doc));
  return path;
}

describe("several kubeconfig files in $KUBECONFIG", () => {
  it("merge as kubectl merges them: the first file to name an entry wins, the first current-context, paths from each file's directory", async () => {
    const first = await file("first", {
      contexts: [{ name: "work", context: { cluster: "prod", user: "me" } }],
      clusters: [{ name: "prod", cluster: { server: "https://prod-first:6443" } }],
    });
    // current-context here, not in the first: it is taken.
    const second = await file("second", {
      "current-context": "work",
      contexts: [{ name: "work", context: { cluster: "other", user: "other" } }],
      clusters: [
        { name: "prod", cluster: { server: "https://prod-second:6443" } },
        { name: "other", cluster: { server: "https://other:6443" } },
      ],
      users: [{ name: "me", user: { "client-certificate": "me.crt", "client-key": "me.key" } }],
    });
    const third = await file("third", {
      "current-context": "elsewhere",
      users: [{ name: "me", user: { token: "never-used-token" } }],
    });
    await writeFile(join(dir, "second", "me.crt"), "SECOND-CERT");
    await writeFile(join(dir, "second", "me.key"), "SECOND-KEY");
    const missing = join(dir, "nowhere", "config");
    const config = await loadKubeConfig({
      env: { KUBECONFIG: [first, missing, "", second, third].join(delimiter) },
    });
    // Served without client-node, which refuses names that repeat.
    expect(config.constructor.name).not.toBe("KubeConfig");
    expect(config.getCurrentCluster()?.server).toBe("https://prod-first:6443");
    const opts = await optionsOf(config);
    expect(String(opts.cert)).toBe("SECOND-CERT");
    expect(String(opts.key)).toBe("SECOND-KEY");
    expect(opts.headers?.Authorization).toBeUndefined();
    // --context picks among the merged contexts; the first "work" still wins.
    await expect(
      loadKubeConfig({ env: { KUBECONFIG: [first, second].join(delimiter) }, context: "other" }),
    ).rejects.toThrow(/has no context "other"/);
  });

  it("hand client-node the merged document, paths made absolute, when a user needs it", async () => {
    const first = await file("provider-first", {
      "current-context": "oidc",
      contexts: [{ name: "oidc", context: { cluster: "c", user: "oidc" } }],
      users: [{ name: "oidc", user: { "auth-provider": { name: "oidc", config: {} } } }],
    });
    const second = await file("provider-second", {
      "current-context": "ignored",
      contexts: [{ name: "oidc", context: { cluster: "ignored", user: "ignored" } }],
      clusters: [
        { name: "c", cluster: { server: "https://c:6443", "certificate-authority": "ca.pem" } },
      ],
    });
    await writeFile(join(dir, "provider-second", "ca.pem"), "SECOND-CA");
    const config = await loadKubeConfig({ env: { KUBECONFIG: [first, second].join(delimiter) } });
    expect(config.constructor.name).toBe("KubeConfig");
    expect(config.getCurrentCluster()?.server).toBe("https://c:6443");
    const cluster = config.getCurrentCluster() as { caFile?: string };
    expect(cluster.caFile).toBe(join(dir, "provider-second", "ca.pem"));
  });

  it("fail with the list when none of them exists, and an explicit file must exist", async () => {
    const a = join(dir, "absent-a");
    const b = join(dir, "absent-b");
    await expect(loadKubeConfig({ env: { KUBECONFIG: [a, b].join(delimiter) } })).rejects.toThrow(
      `none of the kubeconfig files exists: ${a}, ${b}`,
    );
    await expect(loadKubeConfig({ kubeconfig: a, env: {} })).rejects.toThrow(
      new RegExp(`^cannot read the kubeconfig ${a}: ENOENT`),
    );
  });

  it("fail at load, naming the file on one line, when it is not YAML or names no server to call", async () => {
    const broken = join(dir, "broken");
    await writeFile(broken, "clusters: [a\n");
    await expect(loadKubeConfig({ kubeconfig: broken, env: {} })).rejects.toThrow(
      new RegExp(`^the kubeconfig ${broken} is not valid YAML: .* at line 2, column 1$`),
    );
    const cluster = { name: "c", cluster: { server: "https://c:6443" } };
    const context = { name: "ctx", context: { cluster: "c", user: "u" } };
    const cases: [object, string][] = [
      [
        { clusters: [cluster], contexts: [context] },
        "has no current-context: set one, or pass --context",
      ],
      [
        { "current-context": "gone", clusters: [cluster], contexts: [context] },
        'has no context "gone"',
      ],
      [
        { "current-context": "ctx", contexts: [context] },
        'context "ctx" has no cluster with a server',
      ],
      [
        { "current-context": "ctx", clusters: [{ name: "c", cluster: {} }], contexts: [context] },
        'context "ctx" has no cluster with a server',
      ],
    ];
    for (const [i, [doc, message]] of cases.entries()) {
      const path = await file(`unusable-${i}`, doc);
      await expect(loadKubeConfig({ kubeconfig: path, env: {} })).rejects.toThrow(message);
      // A user that only client-node serves is refused alike, not left to fail every request.
      const provider = {
        ...doc,
        users: [{ name: "u", user: { "auth-provider": { name: "oidc" } } }],
      };
      const withProvider = await file(`unusable-provider-${i}`, provider);
      await expect(loadKubeConfig({ kubeconfig: withProvider, env: {} })).rejects.toThrow(message);
    }
  });
});
