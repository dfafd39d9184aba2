import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { arch, platform } from "node:os";
import { basename, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { staticClosure } from "../../scripts/bundle-dist.js";
import { freePort } from "../../src/controlplane/controlplane.js";
import { bucketCrd } from "../../src/crds/bucket.js";
import { allCrds, crdManifest } from "../../src/crds/index.js";
import { nasVolumeCrd } from "../../src/crds/nasvolume.js";
import { type RunningEmulator, startEmulator } from "../../src/emulator/server.js";
import { KubeClient } from "../../src/runtime/kube.js";
import { LEASES } from "../../src/runtime/leader-election.js";
import type { KubeObject, ResourceDescriptor } from "../../src/runtime/resource.js";
import { ApiFront } from "../support/api-front.js";
import { ConnectProxy, startHttpsConnectProxy } from "../support/connect-proxy.js";
import { installCrds } from "../support/crds.js";
import { buildImageLayout, type ImageLayout } from "../support/image-layout.js";
import { adminKubeConfig, createNamespace, eventually } from "../support/kube.js";
import { conditionOf } from "../support/managed.js";
import { adminAccess, writeKubeconfig } from "../support/network-operator.js";
import { TEST_API_KEY } from "../support/operator.js";
import { startTestS3, type TestS3 } from "../support/s3.js";
import { tokenAccount } from "../support/service-account-tokens.js";
import { SocksProxy } from "../support/socks-proxy.js";

/**
 * The operator as the image runs it (test/support/image-layout.ts), not src/ through
 * tsx as the other tests: what the bundle loads only on some paths (undici's
 * ProxyAgent, node-fetch, the S3 client, client-node), what it reads beside itself
 * (package.json's version) and the commands the chart and the docs run with the image.
 */
const NAS_SPEC = { productCode: "nas.capacity.standard", capacityGB: 100, mountPath: "/data/b" };

describe("the bundle the image runs", () => {
  const admin = adminKubeConfig();
  const access = adminAccess(admin);
  const kube = new KubeClient(admin);
  let image: ImageLayout;
  let namespace = "";
  let dir = "";

  beforeAll(async () => {
    await installCrds(admin);
    namespace = await createNamespace(admin, "bundle");
    image = await buildImageLayout();
    dir = await mkdtemp(join(image.dir, "files-"));
    return () => image.remove();
  }, 180_000);

  /** Creates `name` of kind `res` in the test's namespace with `spec` and `labels`. */
  const create = (
    res: ResourceDescriptor,
    name: string,
    spec: object,
    labels: Record<string, string> = {},
  ) =>
    kube.create<KubeObject>(res, {
      apiVersion: `${res.group}/${res.version}`,
      kind: res.kind,
      metadata: { name, namespace, labels },
      spec,
    });

  it("prints every kind's CustomResourceDefinition as src/crds defines it (crds)", async () => {
    const { code, stdout, stderr } = await image.run(["crds"]);
    expect({ code, stderr }).toEqual({ code: 0, stderr: "" });
    expect(parseAllDocuments(stdout).map((d) => d.toJSON())).toEqual(allCrds.map(crdManifest));
  });

  describe("uninstall-check, the chart's pre-delete hook, names what is left", () => {
    const left = "left";
    beforeAll(async () => {
      await create(nasVolumeCrd, left, NAS_SPEC);
    });

    /** Runs uninstall-check with `kubeconfig`; expects exit 1 naming the NasVolume left. */
    async function refuses(kubeconfig: string) {
      const args = ["uninstall-check", "--kubeconfig", kubeconfig, "--namespaces", namespace];
      const out = await image.run(args);
      expect(out.stdout + out.stderr).toContain(`NasVolume ${namespace}/${left}`);
      expect(out.code).toBe(1);
      return out.stdout + out.stderr;
    }

    it("through a SOCKS5 proxy-url with a user and password (socks-proxy-agent and undici's TLS connector, loaded on demand)", async () => {
      const password = "s0cks-bundle-pa55";
      const name = "kube-apiserver.bundle.invalid";
      const socks = new SocksProxy({ [name]: "127.0.0.1" }, `aidc:${password}`);
      await socks.start();
      try {
        const server = `https://${name}:${new URL(access.server).port}`;
        const proxyUrl = `socks5://aidc:${password}@127.0.0.1:${new URL(socks.url).port}`;
        const kubeconfig = await writeKubeconfig(
          join(dir, "socks5"),
          { socks: { ...access, server, tlsServerName: "localhost", proxyUrl } },
          "socks",
        );
        expect(await refuses(kubeconfig)).not.toContain(password);
        expect(socks.tunnels).toBeGreaterThan(0);
      } finally {
        await socks.stop();
      }
    });

    it("through an https:// proxy", async () => {
      const { proxy, ca: proxyCa } = await startHttpsConnectProxy(dir);
      try {
        const ca = Buffer.concat([access.ca ?? Buffer.alloc(0), Buffer.from("\n"), proxyCa]);
        const kubeconfig = await writeKubeconfig(
          join(dir, "https-proxy"),
          { proxied: { ...access, ca, proxyUrl: proxy.url } },
          "proxied",
        );
        await refuses(kubeconfig);
        expect(proxy.url).toMatch(/^https:/);
        expect(proxy.tunnels).toBeGreaterThan(0);
      } finally {
        await proxy.stop();
      }
    });

    it("with the client certificate an exec credential plugin answers", async () => {
      const credential = join(dir, "exec-credential.json");
      await writeFile(
        credential,
        JSON.stringify({
          apiVersion: "client.authentication.k8s.io/v1",
          kind: "ExecCredential",
          status: {
            clientCertificateData: access.clientCert?.toString(),
            clientKeyData: access.clientKey?.toString(),
          },
        }),
      );
      const exec = {
        apiVersion: "client.authentication.k8s.io/v1",
        command: "cat",
        args: [credential],
        interactiveMode: "Never",
      };
      const kubeconfig = await writeKubeconfig(
        join(dir, "exec"),
        { plugin: { server: access.server, ca: access.ca, fields: { user: { exec } } } },
        "plugin",
      );
      await refuses(kubeconfig);
    });

    it("with an OIDC auth-provider user (client-node's KubeConfig, imported from node_modules)", async () => {
      const account = await tokenAccount(admin, namespace, "bundle-oidc");
      try {
        const token = await account.mint("bundle-oidc-token");
        const authProvider = {
          name: "oidc",
          config: { "id-token": token, "idp-issuer-url": "https://127.0.0.1:1", "client-id": "x" },
        };
        const kubeconfig = await writeKubeconfig(
          join(dir, "oidc"),
          {
            oidc: {
              server: access.server,
              ca: access.ca,
              fields: { user: { "auth-provider": authProvider } },
            },
          },
          "oidc",
        );
        expect(await refuses(kubeconfig)).not.toContain(token);
      } finally {
        await account.cleanup();
      }
    });

    it("saying who it is: aidc-operator/<package.json's version> (<os>/<arch>) <commit>", async () => {
      const front = await new ApiFront({ upstream: admin, protocols: "h2,http/1.1" }).start();
      try {
        const kubeconfig = await writeKubeconfig(
          join(dir, "front"),
          { front: { server: front.url, ca: front.caCert } },
          "front",
        );
        await refuses(kubeconfig);
        const { version } = JSON.parse(
          await readFile(join(import.meta.dirname, "../../package.json"), "utf8"),
        );
        const agents = new Set(front.requests.map((r) => r.userAgent));
        expect([...agents]).toEqual([
          expect.stringMatching(
            new RegExp(
              `^aidc-operator/${version.replaceAll(".", "\\.")} \\(${platform()}/${arch()}\\) ([0-9a-f]{7,}|unknown)$`,
            ),
          ),
        ]);
      } finally {
        await front.stop();
      }
    });
  });

  describe("run", () => {
    let emulator: RunningEmulator;
    let s3: TestS3;
    beforeAll(async () => {
      emulator = await startEmulator({ apiKey: TEST_API_KEY, subscriptionDelayMs: 300 });
      s3 = await startTestS3();
    }, 120_000);
    afterAll(async () => {
      await emulator?.stop();
      await s3?.stop();
    });

    it("with the image's Node options, through the kubeconfig's proxy-url, node-fetch to the service and the S3 client through a socks5 HTTP_PROXY, a Bucket on S3 and a shard's Lease: Ready objects, then exit 0 on SIGTERM", async () => {
      // What the entry loads at start: no emulator, control plane, playground or S3
      // module (chunks of their own, named after them), neither client-node nor the S3
      // client (left to node_modules, imported on demand), and no built-in module as an
      // ES module import (required instead: an imported node:http loads undici).
      const start = staticClosure(image.entry);
      expect(start.files.map((f) => basename(f))).toContain("main.js");
      expect(
        start.files.filter((f) => /^(server|controlplane|dev|object-storage)-/.test(basename(f))),
      ).toEqual([]);
      expect(start.bare).toEqual([]);

      const proxy = new ConnectProxy();
      await proxy.start();
      // Names only the socks proxy resolves: the service's and the S3 calls go through it
      // (socks-proxy-agent, loaded from node_modules on demand).
      const [svcHost, s3Host] = ["svc.aidc.test", "s3.aidc.test"];
      const socks = new SocksProxy({ [svcHost]: "127.0.0.1", [s3Host]: "127.0.0.1" }, "aidc:S0cks");
      await socks.start();
      const svcUrl = `http://${svcHost}:${new URL(emulator.url).port}`;
      const s3Url = `http://${s3Host}:${new URL(s3.server.url).port}`;
      try {
        const kubeconfig = await writeKubeconfig(
          join(dir, "run"),
          { proxied: { ...access, proxyUrl: proxy.url } },
          "proxied",
        );
        const port = await freePort();
        const config = join(dir, "config.yaml");
        await writeFile(
          config,
          JSON.stringify({
            watchNamespaces: [namespace],
            service: { baseUrl: svcUrl, allowInsecureHttp: true, httpClient: "node-fetch" },
            objectStorage: { ...s3.config, endpoint: s3Url },
            server: { port, host: "127.0.0.1" },
          }),
        );
        const flags = ["--leader-elect", "--lease-namespace", namespace, "--shard-key", "bundle"];
        const op = image.start(["run", "--config", config, "--kubeconfig", kubeconfig, ...flags], {
          AIDC_API_KEY: TEST_API_KEY,
          NODE_ENV: "production",
          POD_NAME: "bundle-0",
          HTTP_PROXY: socks.url.replace("socks5://", "socks5h://aidc:S0cks@"),
        });
        const logTail = () => `its last lines:\n${op.out.stdout.slice(-3_000)}${op.out.stderr}`;
        const base = `http://127.0.0.1:${port}`;
        await eventually(async () => (await fetch(`${base}/readyz`)).status === 200, 60_000).catch(
          (err: Error) => {
            throw new Error(`${err.message}; ${logTail()}`);
          },
        );
        const shard = { "aidc.io/shard": "bundle" };
        await create(nasVolumeCrd, "bundled", NAS_SPEC, shard);
        await create(bucketCrd, `bundled-${namespace}`, { versioning: "Enabled" }, shard);
        for (const [res, name] of [
          [nasVolumeCrd, "bundled"],
          [bucketCrd, `bundled-${namespace}`],
        ] as const) {
          await eventually(async () => {
            const obj = await kube.get<KubeObject>(res, { namespace, name });
            return conditionOf(obj, "Ready")?.status === "True";
          }, 60_000).catch((err: Error) => {
            throw new Error(`${res.kind} ${name} not Ready: ${err.message}; ${logTail()}`);
          });
        }
        expect(await s3.client().getVersioning(`bundled-${namespace}`)).toBe("Enabled");
        const lease = await kube.get(LEASES, { namespace, name: "aidc-operator-leader-bundle" });
        const holder = (lease?.spec as { holderIdentity?: string } | undefined)?.holderIdentity;
        expect(holder).toMatch(/^bundle-0_/);
        // The image's Node options keep V8's young generation small once started (2 MiB
        // semi-spaces, a 4 MiB new space; with Node's default it has grown to 32 MiB by then).
        const metrics = await (await fetch(`${base}/metrics`)).text();
        const newSpace = /^nodejs_heap_space_size_total_bytes\{space="new"\} (\d+)/m.exec(metrics);
        expect(Number(newSpace?.[1])).toBeLessThanOrEqual(4 * 1024 * 1024);
        expect(metrics).toMatch(/^leader_election_master_status\{[^}]*\} 1$/m);
        expect(proxy.tunnels).toBeGreaterThan(0);
        expect(socks.targets).toContain(new URL(svcUrl).host);
        expect(socks.targets).toContain(new URL(s3Url).host);
        op.child.kill("SIGTERM");
        expect(await op.exited).toBe(0);
        expect(op.out.stdout).toContain('"msg":"manager stopped"');
        const output = op.out.stdout + op.out.stderr;
        for (const secret of [TEST_API_KEY, s3.server.secretAccessKey, "S0cks"]) {
          expect(output).not.toContain(secret);
        }
      } finally {
        await proxy.stop();
        await socks.stop();
      }
    }, 150_000);
  });
});
