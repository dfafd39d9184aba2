import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { stringify } from "yaml";
import { KUBECONFIG_SEARCH, loadKubeConfig } from "./kube-config.js";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "kube-config-"));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

/** A kubeconfig file with one context over `cluster` and `user`. */
async function kubeconfig(name: string, cluster: object, user: object): Promise<string> {
  const file = join(dir, name);
  await writeFile(
    file,
    stringify({
      apiVersion: "v1",
      kind: "Config",
      "current-context": "ctx",
      contexts: [{ name: "ctx", context: { cluster: "c", user: "u" } }],
      clusters: [{ name: "c", cluster }],
      users: [{ name: "u", user }],
    }),
  );
  return file;
}

async function optionsOf(config: Awaited<ReturnType<typeof loadKubeConfig>>) {
  const opts: Record<string, unknown> & { headers?: Record<string, unknown> } = { headers: {} };
  await config.applyToHTTPSOptions(opts);
  return opts;
}

describe("loadKubeConfig", () => {
  it("reads a client certificate kubeconfig itself: server, CA, certificate and key", async () => {
    const b64 = (s: string) => Buffer.from(s).toString("base64");
    const file = await kubeconfig(
      "certs",
      { server: "https://10.0.0.1:6443", "certificate-authority-data": b64("CA") },
      { "client-certificate-data": b64("CERT"), "client-key-data": b64("KEY") },
    );
    const config = await loadKubeConfig({ kubeconfig: file, env: {} });
    expect(config.constructor.name).not.toBe("KubeConfig");
    expect(config.getCurrentCluster()?.server).toBe("https://10.0.0.1:6443");
    const opts = await optionsOf(config);
    expect(String(opts.ca)).toBe("CA");
    expect(String(opts.cert)).toBe("CERT");
    expect(String(opts.key)).toBe("KEY");
    expect(opts.headers?.Authorization).toBeUndefined();
    expect(config.credentialsMaxAgeMs).toBe(Number.POSITIVE_INFINITY);
  });

  it("reads files relative to the kubeconfig, a token, and insecure-skip-tls-verify", async () => {
    await writeFile(join(dir, "ca.crt"), "FILE-CA");
    const file = await kubeconfig(
      "token",
      {
        server: "https://api:6443",
        "certificate-authority": "ca.crt",
        "insecure-skip-tls-verify": true,
      },
      { token: "t0ken" },
    );
    const config = await loadKubeConfig({ kubeconfig: file, env: {} });
    const opts = await optionsOf(config);
    expect(String(opts.ca)).toBe("FILE-CA");
    expect(opts.rejectUnauthorized).toBe(false);
    expect(opts.headers?.Authorization).toBe("Bearer t0ken");
    // A CA file can be rotated: read again once a minute.
    expect(config.credentialsMaxAgeMs).toBe(60_000);
  });

  it("takes $KUBECONFIG, then the pod's service account before ~/.kube/config", async () => {
    const file = await kubeconfig("env", { server: "https://from-env:6443" }, { token: "x" });
    const inPod = { KUBERNETES_SERVICE_HOST: "10.96.0.1", KUBERNETES_SERVICE_PORT: "443" };
    const viaEnv = await loadKubeConfig({ env: { KUBECONFIG: file, ...inPod } });
    expect(viaEnv.getCurrentCluster()?.server).toBe("https://from-env:6443");
    // The flags' help says this order.
    const said = ["$KUBECONFIG", "in-cluster", "~/.kube/config"].map((s) =>
      KUBECONFIG_SEARCH.indexOf(s),
    );
    expect(said).toEqual([...said].sort((a, b) => a - b));
    expect(said[0]).toBeGreaterThanOrEqual(0);
    await writeFile(join(dir, "token"), "sa-token\n");
    const pod = await loadKubeConfig({ env: inPod, serviceAccountDir: dir });
    expect(pod.getCurrentCluster()?.server).toBe("https://10.96.0.1:443");
    const opts = await optionsOf(pod);
    expect(opts.headers?.Authorization).toBe("Bearer sa-token");
    expect(String(opts.ca)).toBe("FILE-CA");
    // An IPv6 cluster's service address is bracketed in the URL.
    const v6 = { KUBERNETES_SERVICE_HOST: "fd00::1", KUBERNETES_SERVICE_PORT: "443" };
    const podV6 = await loadKubeConfig({ env: v6, serviceAccountDir: dir });
    expect(podV6.getCurrentCluster()?.server).toBe("https://[fd00::1]:443");
  });

  it("serves a proxy-url, an http:// server with a path, and a token file over a token", async () => {
    await writeFile(join(dir, "file-token"), "from-file\n");
    const file = await kubeconfig(
      "proxied",
      { server: "http://gateway:8080/k8s/clusters/c-abc", "proxy-url": "http://proxy:3128" },
      { token: "static", tokenFile: "file-token" },
    );
    const config = await loadKubeConfig({ kubeconfig: file, env: { HTTPS_PROXY: "x" } });
    expect(config.constructor.name).not.toBe("KubeConfig");
    expect(config.getCurrentCluster()).toEqual({
      server: "http://gateway:8080/k8s/clusters/c-abc",
      proxyUrl: "http://proxy:3128",
    });
    expect(config.proxyEnv).toEqual({ HTTPS_PROXY: "x" });
    expect((await optionsOf(config)).headers?.Authorization).toBe("Bearer from-file");
    expect(config.invalidateCredentials?.()).toBe(true);
    expect(config.credentialsMaxAgeMs).toBe(60_000);
  });

  it("keeps the last token when its file cannot be read again, and says so once without it", async () => {
    const tokenFile = join(dir, "rotating-token");
    await writeFile(tokenFile, "secret-token-value");
    const file = await kubeconfig("rotating", { server: "https://api:6443" }, { tokenFile });
    const warnings: unknown[][] = [];
    const log = { warn: (...args: unknown[]) => warnings.push(args) };
    const config = await loadKubeConfig({ kubeconfig: file, env: {}, log: log as never });
    expect((await optionsOf(config)).headers?.Authorization).toBe("Bearer secret-token-value");
    await rm(tokenFile);
    for (let i = 0; i < 3; i++) {
      config.invalidateCredentials?.();
      expect((await optionsOf(config)).headers?.Authorization).toBe("Bearer secret-token-value");
    }
    expect(warnings).toHaveLength(1);
    expect(JSON.stringify(warnings)).toContain("rotating-token");
    expect(JSON.stringify(warnings)).not.toContain("secret-token-value");
    // Readable again: the new token, and a later failure is reported again.
    await writeFile(tokenFile, "next-token");
    config.invalidateCredentials?.();
    expect((await optionsOf(config)).headers?.Authorization).toBe("Bearer next-token");
    await rm(tokenFile);
    config.invalidateCredentials?.();
    await optionsOf(config);
    expect(warnings).toHaveLength(2);
  });

  it("reads CA, certificate and key files once a minute, at once after a 401, and keeps them while unreadable", async () => {
    const files = {
      ca: join(dir, "tls-ca"),
      cert: join(dir, "tls-cert"),
      key: join(dir, "tls-key"),
    };
    await writeFile(files.ca, "CA-1");
    await writeFile(files.cert, "CERT-1");
    await writeFile(files.key, "KEY-1");
    const file = await kubeconfig(
      "tls-files",
      { server: "https://api:6443", "certificate-authority": files.ca },
      { "client-certificate": files.cert, "client-key": files.key },
    );
    const warnings: unknown[][] = [];
    const log = { warn: (...args: unknown[]) => warnings.push(args) };
    vi.useFakeTimers({ toFake: ["Date"] });
    try {
      const config = await loadKubeConfig({ kubeconfig: file, env: {}, log: log as never });
      const first = await optionsOf(config);
      await writeFile(files.cert, "CERT-2");
      const again = await optionsOf(config);
      // The same content, the same Buffer: nothing read within the minute.
      expect(again.cert).toBe(first.cert);
      expect(String(again.ca)).toBe("CA-1");
      vi.advanceTimersByTime(60_000);
      expect(String((await optionsOf(config)).cert)).toBe("CERT-2");
      // Refused (401): read at once.
      await writeFile(files.cert, "CERT-3");
      expect(config.invalidateCredentials?.()).toBe(true);
      expect(String((await optionsOf(config)).cert)).toBe("CERT-3");
      // Mid-rotation (no file): the last content, with a warning naming the file.
      await rm(files.ca);
      vi.advanceTimersByTime(60_000);
      expect(String((await optionsOf(config)).ca)).toBe("CA-1");
      expect(JSON.stringify(warnings)).toContain("tls-ca");
    } finally {
      vi.useRealTimers();
    }
  });

  it("refuses a proxy it cannot use at load, naming where it was set and not its password", async () => {
    const file = await kubeconfig(
      "bad-proxy",
      { server: "https://api.example:6443", "proxy-url": "ftp://user:s3cret@proxy:21" },
      { token: "t" },
    );
    const refused = loadKubeConfig({ kubeconfig: file, env: {} });
    await expect(refused).rejects.toThrow(
      'the proxy of the API server (proxy-url): unsupported proxy scheme "ftp": http, https or socks5',
    );
    await expect(refused).rejects.not.toThrow(/s3cret/);
    const direct = await kubeconfig("env-proxy", { server: "https://api.example:6443" }, {});
    await expect(
      loadKubeConfig({ kubeconfig: direct, env: { HTTPS_PROXY: "socks4://proxy:1080" } }),
    ).rejects.toThrow('(HTTPS_PROXY or HTTP_PROXY): unsupported proxy scheme "socks4"');
    // NO_PROXY naming the server: the proxy is never used, so never refused.
    const bypassed = { HTTPS_PROXY: "socks4://proxy:1080", NO_PROXY: ".example" };
    await expect(loadKubeConfig({ kubeconfig: direct, env: bypassed })).resolves.toBeDefined();
  });

  it("takes the context it is told, and names a context the file lacks", async () => {
    const file = join(dir, "contexts");
    await writeFile(
      file,
      stringify({
        "current-context": "one",
        contexts: [
          { name: "one", context: { cluster: "c1", user: "u" } },
          { name: "two", context: { cluster: "c2", user: "u" } },
        ],
        clusters: [
          { name: "c1", cluster: { server: "https://one:6443" } },
          { name: "c2", cluster: { server: "https://two:6443" } },
        ],
        users: [{ name: "u", user: { token: "t" } }],
      }),
    );
    const two = await loadKubeConfig({ kubeconfig: file, context: "two", env: {} });
    expect(two.getCurrentCluster()?.server).toBe("https://two:6443");
    await expect(loadKubeConfig({ kubeconfig: file, context: "three", env: {} })).rejects.toThrow(
      /has no context "three"/,
    );
    const provider = await kubeconfig(
      "provider-contexts",
      { server: "https://api:6443" },
      { "auth-provider": { name: "oidc", config: {} } },
    );
    await expect(
      loadKubeConfig({ kubeconfig: provider, context: "nope", env: {} }),
    ).rejects.toThrow(/has no context "nope"/);
  });

  it("sends the impersonation of as, as-uid, as-groups and as-user-extra, one header per value", async () => {
    const file = await kubeconfig(
      "impersonate",
      { server: "https://api:6443", "disable-compression": true },
      {
        token: "t0ken",
        as: "alice",
        "as-uid": "1234",
        "as-groups": ["team-a", "system:authenticated"],
        "as-user-extra": { "scopes.example.com/x y": ["read", "write"] },
      },
    );
    const config = await loadKubeConfig({ kubeconfig: file, env: {} });
    expect(config.constructor.name).not.toBe("KubeConfig");
    const { headers } = await optionsOf(config);
    expect(headers).toEqual({
      Authorization: "Bearer t0ken",
      "Impersonate-User": "alice",
      "Impersonate-Uid": "1234",
      "Impersonate-Group": ["team-a", "system:authenticated"],
      "Impersonate-Extra-scopes.example.com%2Fx%20y": ["read", "write"],
    });
  });

  it("sends a username and password as basic auth", async () => {
    const file = await kubeconfig(
      "basic",
      { server: "https://api:6443" },
      { username: "admin", password: "pa55word" },
    );
    const config = await loadKubeConfig({ kubeconfig: file, env: {} });
    expect(config.constructor.name).not.toBe("KubeConfig");
    expect((await optionsOf(config)).auth).toBe("admin:pa55word");
  });

  it("leaves an auth provider to client-node's KubeConfig", async () => {
    const file = await kubeconfig(
      "auth-provider",
      { server: "https://api:6443" },
      { "auth-provider": { name: "oidc", config: { "id-token": "x" } } },
    );
    const config = await loadKubeConfig({ kubeconfig: file, env: {} });
    expect(config.constructor.name).toBe("KubeConfig");
    expect(config.getCurrentCluster()?.server).toBe("https://api:6443");
  });
});
