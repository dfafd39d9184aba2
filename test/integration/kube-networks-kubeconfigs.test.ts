import { chmod, mkdir, readFile, writeFile } from "node:fs/promises";
import { delimiter, join } from "node:path";
import { describe, expect, it } from "vitest";
import { ConnectProxy } from "../support/connect-proxy.js";
import {
  createNamespace,
  eventually,
  networkSuite,
  READY_MS,
  readyThrough,
  startNetworkOperator,
  statusWithToken,
  TcpProxy,
  tokenAccount,
  UserNasVolumes,
  writeKubeconfig,
} from "../support/kube-networks.js";
import { SocksProxy } from "../support/socks-proxy.js";

/**
 * The operator on kubeconfigs as platform teams hand them out (kubeadm's admin.conf,
 * kubectl's merged files, an API server reached by address): each time a NasVolume of
 * the real API server becomes Ready.
 */
describe("the operator on the kubeconfigs platform teams write", () => {
  const net = networkSuite();
  const { admin, access } = net;

  /** The admin's CA, certificate and key as files in `dir`: ca.crt, admin.crt, admin.key. */
  async function credentialFiles(dir: string): Promise<void> {
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, "ca.crt"), access.ca ?? "");
    await writeFile(join(dir, "admin.crt"), access.clientCert ?? "");
    await writeFile(join(dir, "admin.key"), access.clientKey ?? "", { mode: 0o600 });
  }

  it("takes the CA, client certificate and key as files relative to the kubeconfig's directory", async () => {
    const dir = join(net.bed.dir, "relative");
    await credentialFiles(join(dir, "pki"));
    const kubeconfig = await writeKubeconfig(
      join(dir, "admin.conf"),
      {
        admin: {
          server: access.server,
          fields: {
            cluster: { "certificate-authority": "pki/ca.crt" },
            user: { "client-certificate": "pki/admin.crt", "client-key": "pki/admin.key" },
          },
        },
      },
      "admin",
    );
    await readyThrough(net.bed, admin, kubeconfig, "net-relative-files");
  });

  it("merges the files $KUBECONFIG lists as kubectl does", async () => {
    const first = join(net.bed.dir, "merge-first");
    const second = join(net.bed.dir, "merge-second");
    await credentialFiles(first);
    await credentialFiles(second);
    // The first file: the current context and its cluster, the CA relative to it.
    await writeFile(
      join(first, "config"),
      JSON.stringify({
        "current-context": "work",
        contexts: [{ name: "work", context: { cluster: "work", user: "work" } }],
        clusters: [
          { name: "work", cluster: { server: access.server, "certificate-authority": "ca.crt" } },
        ],
      }),
    );
    // The second: a cluster and a context of the same names (ignored: the first file's
    // win), the user the first file's context names (its files relative to the second
    // file), and a current context of its own (ignored too). Port 1 on loopback:
    // nothing listens there.
    await writeFile(
      join(second, "config"),
      JSON.stringify({
        "current-context": "elsewhere",
        contexts: [
          { name: "work", context: { cluster: "nowhere", user: "work" } },
          { name: "elsewhere", context: { cluster: "nowhere", user: "work" } },
        ],
        clusters: [
          { name: "work", cluster: { server: "https://127.0.0.1:1" } },
          { name: "nowhere", cluster: { server: "https://127.0.0.1:1" } },
        ],
        users: [
          { name: "work", user: { "client-certificate": "admin.crt", "client-key": "admin.key" } },
        ],
      }),
    );
    const missing = join(net.bed.dir, "merge-missing", "config");
    await readyThrough(net.bed, admin, undefined, "net-merged", {
      env: {
        KUBECONFIG: [join(first, "config"), missing, join(second, "config")].join(delimiter),
      },
    });
  });

  it("skips verification with insecure-skip-tls-verify", async () => {
    const { ca: _ca, ...withoutCa } = access;
    const kubeconfig = await writeKubeconfig(
      join(net.bed.dir, "insecure"),
      { insecure: { ...withoutCa, fields: { cluster: { "insecure-skip-tls-verify": true } } } },
      "insecure",
    );
    await readyThrough(net.bed, admin, kubeconfig, "net-insecure");
  });

  it("reaches a server by its IPv6 address, checking the certificate against tls-server-name", async () => {
    // The API server listens on 127.0.0.1; a TCP relay on [::1] passes TLS through. Its
    // certificate names 127.0.0.1 and localhost, not ::1: only tls-server-name makes it valid.
    const tcp = new TcpProxy(Number(new URL(access.server).port), "::1");
    const port = await tcp.start();
    try {
      const kubeconfig = await writeKubeconfig(
        join(net.bed.dir, "ipv6"),
        { v6: { ...access, server: `https://[::1]:${port}`, tlsServerName: "localhost" } },
        "v6",
      );
      await readyThrough(net.bed, admin, kubeconfig, "net-ipv6");
      expect(tcp.accepted).toBeGreaterThan(0);
    } finally {
      await tcp.stop();
    }
  });

  it("reaches a server by a name (localhost), its certificate checked against that name", async () => {
    const port = new URL(access.server).port;
    const kubeconfig = await writeKubeconfig(
      join(net.bed.dir, "localhost"),
      { local: { ...access, server: `https://localhost:${port}` } },
      "local",
    );
    await readyThrough(net.bed, admin, kubeconfig, "net-localhost");
  });

  it("acts as the user and groups of as and as-groups (impersonation), directly and through a proxy-url, http and socks5", async () => {
    // No RBAC names this user: only the groups sent with it (system:masters) let it work,
    // each group a header of its own.
    const impersonating = {
      ...access,
      fields: { user: { as: "aidc-nobody", "as-groups": ["system:masters", "team-a"] } },
    };
    const direct = await writeKubeconfig(
      join(net.bed.dir, "impersonate"),
      { as: impersonating },
      "as",
    );
    await readyThrough(net.bed, admin, direct, "net-impersonate");
    const proxy = new ConnectProxy();
    await proxy.start();
    try {
      const proxied = await writeKubeconfig(
        join(net.bed.dir, "impersonate-proxied"),
        { as: { ...impersonating, proxyUrl: proxy.url } },
        "as",
      );
      await readyThrough(net.bed, admin, proxied, "net-impersonate-proxied");
      expect(proxy.tunnels).toBeGreaterThan(0);
    } finally {
      await proxy.stop();
    }
    // Through a SOCKS5 tunnel, TLS made inside it offers HTTP/1.1 only too.
    const socks = new SocksProxy({});
    await socks.start();
    try {
      const tunnelled = await writeKubeconfig(
        join(net.bed.dir, "impersonate-socks"),
        { as: { ...impersonating, proxyUrl: socks.url } },
        "as",
      );
      await readyThrough(net.bed, admin, tunnelled, "net-impersonate-socks");
      expect(socks.tunnels).toBeGreaterThan(0);
    } finally {
      await socks.stop();
    }
  });

  it("takes a client certificate from an exec plugin (v1beta1, as Teleport's tsh answers)", async () => {
    const dir = join(net.bed.dir, "exec-cert");
    await credentialFiles(dir);
    // PEM as a JSON string: each line ends with a literal \n.
    const script = [
      "#!/bin/sh",
      'cd "$(dirname "$0")"',
      String.raw`pem() { awk '{printf "%s\\n", $0}' "$1"; }`,
      String.raw`printf '{"apiVersion":"client.authentication.k8s.io/v1beta1","kind":"ExecCredential","status":{"clientCertificateData":"%s","clientKeyData":"%s"}}' "$(pem admin.crt)" "$(pem admin.key)"`,
      "",
    ].join("\n");
    await writeFile(join(dir, "tsh.sh"), script, { mode: 0o755 });
    const kubeconfig = await writeKubeconfig(
      join(dir, "config"),
      {
        tsh: {
          server: access.server,
          ...(access.ca ? { ca: access.ca } : {}),
          fields: {
            user: {
              exec: {
                apiVersion: "client.authentication.k8s.io/v1beta1",
                command: join(dir, "tsh.sh"),
              },
            },
          },
        },
      },
      "tsh",
    );
    await readyThrough(net.bed, admin, kubeconfig, "net-exec-cert");
  });

  it("runs an exec plugin once for all requests, again at its expirationTimestamp and after a 401, its stderr logged without the token", async () => {
    const namespace = await createNamespace(admin, "net-exec");
    const account = await tokenAccount(admin, namespace);
    const dir = join(net.bed.dir, "exec");
    await mkdir(dir);
    // What the plugin answers: the token in `token`, valid for `ttl` seconds; each run
    // appends "<epoch seconds> <label>" to `runs`.
    const issue = async (label: string, token: string, ttl: number) => {
      await writeFile(join(dir, "token"), token);
      await writeFile(join(dir, "ttl"), String(ttl));
      await writeFile(join(dir, "label"), label);
    };
    await writeFile(
      join(dir, "plugin.sh"),
      [
        "#!/bin/sh",
        'cd "$(dirname "$0")"',
        'echo "$(date +%s) $(cat label)" >> runs',
        "t=$(cat token)",
        'exp=$(date -u -d "+$(cat ttl) seconds" +%Y-%m-%dT%H:%M:%SZ)',
        'echo "plugin: issued $t" >&2',
        `printf '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"%s","expirationTimestamp":"%s"}}' "$t" "$exp"`,
        "",
      ].join("\n"),
    );
    await chmod(join(dir, "plugin.sh"), 0o755);
    const runs = async () =>
      (await readFile(join(dir, "runs"), "utf8").catch(() => ""))
        .split("\n")
        .filter((l) => l !== "")
        .map((l) => {
          const [at, label] = l.split(" ");
          return { at: Number(at), label };
        });
    const tokens = { a: await account.mint("token-a"), b: await account.mint("token-b") };
    await issue("a", tokens.a, 20);
    const kubeconfig = await writeKubeconfig(
      join(dir, "config"),
      {
        exec: {
          server: access.server,
          ...(access.ca ? { ca: access.ca } : {}),
          fields: {
            user: {
              exec: {
                apiVersion: "client.authentication.k8s.io/v1",
                // A path: relative to the kubeconfig's directory.
                command: "./plugin.sh",
                interactiveMode: "Never",
              },
            },
          },
        },
      },
      "exec",
    );
    const op = await startNetworkOperator({
      emulatorUrl: net.bed.emulator.url,
      namespaces: [namespace],
      kubeconfig,
    });
    const nas = new UserNasVolumes(admin, namespace);
    let c = "";
    try {
      await nas.create("before");
      await nas.waitReady("before", READY_MS, op);
      // Past token a's expiry, the next request runs the plugin again: token b, for an hour.
      await issue("b", tokens.b, 3600);
      const firstRun = (await runs())[0]?.at ?? 0;
      await new Promise((r) => setTimeout(r, Math.max(0, (firstRun + 21) * 1000 - Date.now())));
      await nas.create("middle");
      await nas.waitReady("middle", READY_MS, op);
      expect((await runs()).map((r) => r.label)).toContain("b");
      // Token b refused: the next request's 401 runs the plugin again, for token c.
      c = await account.mint("token-c");
      await issue("c", c, 3600);
      await account.revoke("token-b");
      const probe = `/api/v1/namespaces/${namespace}`;
      // The API server caches a token's verdict for 10 s.
      await eventually(
        async () =>
          (await statusWithToken(access.server, access.ca ?? Buffer.alloc(0), tokens.b, probe)) ===
          401,
        30_000,
        500,
      );
      await nas.create("after");
      await nas.waitReady("after", READY_MS, op);
    } finally {
      await op.stop();
      await account.cleanup();
    }
    const all = await runs();
    // One run per token: never a run per request, a before its expiry only once.
    expect(all.map((r) => r.label)).toEqual([
      ...all.filter((r) => r.label === "a").map(() => "a"),
      "b",
      "c",
    ]);
    for (const [i, r] of all.entries()) {
      const previous = all[i - 1];
      if (previous?.label === "a") expect(r.at - previous.at).toBeGreaterThanOrEqual(18);
    }
    const log = op.logTail(Number.MAX_SAFE_INTEGER);
    expect(log).toContain("plugin: issued [REDACTED]");
    for (const token of [tokens.a, tokens.b, c]) expect(log).not.toContain(token);
  }, 240_000);
});
