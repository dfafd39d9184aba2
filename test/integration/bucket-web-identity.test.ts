/**
 * The default connection's S3 credentials from web identity alone (`AWS_ROLE_ARN`,
 * `AWS_WEB_IDENTITY_TOKEN_FILE`, `AWS_ENDPOINT_URL_STS`), under `aidc-operator run`, on
 * the real API server and MinIO's STS AssumeRoleWithWebIdentity trusting a local OIDC
 * issuer. The STS host is a name no DNS knows: only the environment's HTTP_PROXY reaches
 * it, so every exchange takes the operator's proxy; the proxy records each one. A Bucket
 * goes Ready; credentials are renewed before they expire, without a failed call; a token
 * the kubelet rewrote is used at the next call; a refused token holds the Bucket with
 * S3CredentialsRefused naming the file, and a good one written there lifts the hold;
 * credentials the storage revoked are asked for again; a Bucket's exportTo Secret gets
 * the renewed credentials. An https:// STS is reached through
 * HTTPS_PROXY, trusting the CAs the process trusts. No token and no credential reaches
 * the log, the status or an Event.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { getCACertificates, setDefaultCACertificates } from "node:tls";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { bucketController } from "../../src/controllers/bucket/controller.js";
import { SECRETS } from "../../src/controllers/connections/secrets.js";
import { bucketCrd } from "../../src/crds/bucket.js";
import { type RunningEmulator, startEmulator } from "../../src/emulator/server.js";
import { KubeClient } from "../../src/runtime/kube.js";
import type { KubeObject } from "../../src/runtime/resource.js";
import { linesInto } from "../support/captured-log.js";
import { ConnectProxy } from "../support/connect-proxy.js";
import { installCrds } from "../support/crds.js";
import { adminKubeConfig, createNamespace } from "../support/kube.js";
import { conditionOf, EVENTS, ObjectsOf } from "../support/managed.js";
import { revokeOwnTokens } from "../support/minio-iam.js";
import { minioOpenIdEnv, OidcIssuer } from "../support/oidc-issuer.js";
import { TEST_API_KEY } from "../support/operator.js";
import { RecordingProxy, STS_HOST } from "../support/recording-proxy.js";
import { runInProcessWith } from "../support/run-operator.js";
import { startTestS3, type TestS3 } from "../support/s3.js";
import { TlsFront } from "../support/tls-front.js";

/** MinIO takes any role with a claim-based provider; the SDK needs one. */
const ROLE = "arn:aws:iam::000000000000:role/aidc-operator";

describe("the default connection's S3 credentials from web identity", () => {
  const kc = adminKubeConfig();
  let emulator: RunningEmulator;
  let issuer: OidcIssuer;
  let s3: TestS3;
  let proxy: RecordingProxy;
  let dir: string;

  beforeAll(async () => {
    await installCrds(kc);
    emulator = await startEmulator({ apiKey: TEST_API_KEY });
    issuer = await new OidcIssuer().start();
    s3 = await startTestS3({ env: minioOpenIdEnv(issuer) });
    proxy = new RecordingProxy();
    await proxy.start();
    dir = await mkdtemp(join(tmpdir(), "aidc-web-identity-"));
  });
  afterAll(async () => {
    await proxy?.stop();
    await s3?.stop();
    await issuer?.stop();
    await emulator?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  /** The operator, its S3 credentials from web identity alone, its log in `lines`. */
  const operator = (
    namespace: string,
    tokenFile: string,
    lines: string[],
    holdMs = 120_000,
    env: Record<string, string> = {},
  ) =>
    runInProcessWith(
      {
        service: { baseUrl: emulator.url, allowInsecureHttp: true },
        // No credentialsDir, no key pair in the environment.
        objectStorage: {
          endpoint: s3.server.url,
          allowInsecureHttp: true,
          credentialsRefreshMs: 200,
          // A Bucket may hand the credentials it uses to pods (spec.exportTo.secretName).
          exportCredentials: true,
        },
        watchNamespaces: [namespace],
        // By default only the token's change can bring a held Bucket back within the test.
        holdBackoff: { baseMs: holdMs, maxMs: holdMs },
        resyncPeriodMs: 0,
        server: { port: 0, host: "127.0.0.1" },
        log: { level: "debug" },
      },
      {
        controllerFactories: [bucketController],
        env: {
          AIDC_API_KEY: TEST_API_KEY,
          AWS_ROLE_ARN: ROLE,
          AWS_WEB_IDENTITY_TOKEN_FILE: tokenFile,
          AWS_ENDPOINT_URL_STS: `http://${STS_HOST}:${new URL(s3.server.url).port}`,
          HTTP_PROXY: proxy.url,
          ...env,
        },
        logDestination: linesInto(lines),
      },
    );

  /** Everything the operator showed of `name` in `namespace`: object, Events, log. */
  const shown = async (namespace: string, buckets: ObjectsOf, lines: string[]) => {
    const { items } = await new KubeClient(kc).list(EVENTS, namespace);
    return JSON.stringify([await buckets.get("b"), items, lines]);
  };

  /** The message of the Bucket's hold for its refused credentials, once it is held. */
  const heldMessage = async (buckets: ObjectsOf) => {
    const held = await buckets.waitForCondition(
      "b",
      "Synced",
      "False",
      "S3CredentialsRefused",
      30_000,
    );
    return conditionOf(held, "Synced")?.message;
  };

  /** A namespace, a token file holding `token`, the operator reading it (log in `lines`). */
  const started = async (
    label: string,
    token: string,
    holdMs?: number,
    env?: Record<string, string>,
  ) => {
    const namespace = await createNamespace(kc, `bucket-web-identity${label}`);
    const tokenFile = join(dir, namespace);
    await writeFile(tokenFile, token);
    const lines: string[] = [];
    const seen = proxy.exchanges.length;
    const op = await operator(namespace, tokenFile, lines, holdMs, env);
    const buckets = new ObjectsOf(new KubeClient(kc), bucketCrd, namespace);
    const exchanges = () => proxy.exchanges.slice(seen);
    return { namespace, tokenFile, lines, op, buckets, name: `wi-${namespace}`, exchanges };
  };

  it("goes Ready, renews credentials before they expire without a failed call, and uses a rotated token", async () => {
    // MinIO's credentials end with the token: 40 s, renewed at half their life.
    const first = issuer.token("system:serviceaccount:aidc-system:aidc-operator", 40);
    const {
      namespace,
      tokenFile,
      lines,
      op,
      buckets,
      name,
      exchanges: own,
    } = await started("", first);
    /** Patches the tags and waits for their generation to be Synced, never held. */
    let v = 0;
    const synced = async () => {
      v++;
      await buckets.patchSpec("b", { tags: { v: String(v) } });
      const o = await buckets.waitFor(
        "b",
        (b: KubeObject) =>
          conditionOf(b, "Synced")?.observedGeneration === b.metadata?.generation &&
          conditionOf(b, "Synced")?.status !== "Unknown",
        20_000,
      );
      expect(conditionOf(o, "Synced")).toMatchObject({ status: "True" });
    };
    try {
      await buckets.create("b", { name, tags: { v: "0" } });
      await buckets.waitForCondition("b", "Ready", "True", "Available", 30_000);
      expect(own().map((e) => e.token)).toEqual([first]);
      const obtained = own()[0]?.at ?? 0;
      // Calls every 2 s until past half the first credentials' life: one renewal.
      while (Date.now() - obtained < 24_000) {
        await synced();
        await new Promise((r) => setTimeout(r, 2_000));
      }
      expect(own().map((e) => e.token)).toEqual([first, first]);
      const renewedAfter = (own()[1]?.at ?? 0) - obtained;
      expect(renewedAfter).toBeGreaterThan(15_000);
      expect(renewedAfter).toBeLessThan(26_000);
      // The kubelet rewrites the token: the next call exchanges it, and keeps what it got.
      const second = issuer.token("system:serviceaccount:aidc-system:aidc-operator", 3_600);
      await writeFile(tokenFile, second);
      await new Promise((r) => setTimeout(r, 500));
      for (let i = 0; i < 3; i++) await synced();
      expect(own().map((e) => e.token)).toEqual([first, first, second]);
      expect((await s3.client().getTags(name)).v).toBe(String(v));
      const all = await shown(namespace, buckets, lines);
      expect(all).not.toContain("S3CredentialsRefused");
      for (const e of own()) {
        for (const secret of [e.token, ...e.answered]) expect(all).not.toContain(secret);
      }
    } finally {
      expect(await op.stop()).toBe(0);
    }
  }, 90_000);

  it("holds a Bucket whose token STS refuses with S3CredentialsRefused naming the file, until a good one is written there", async () => {
    const foreign = issuer.token("system:serviceaccount:aidc-system:aidc-operator", 3_600, {
      foreign: true,
    });
    const { namespace, tokenFile, lines, op, buckets, name, exchanges } = await started(
      "-refused",
      foreign,
    );
    try {
      await buckets.create("b", { name });
      expect(await heldMessage(buckets)).toContain(
        `web identity (role ${ROLE}, token file ${tokenFile}) was refused`,
      );
      const good = issuer.token("system:serviceaccount:aidc-system:aidc-operator", 3_600);
      const written = Date.now();
      await writeFile(tokenFile, good);
      await buckets.waitForCondition("b", "Ready", "True", "Available", 10_000);
      // One read interval (200 ms) plus a reconcile; the hold backoff is 2 min.
      expect(Date.now() - written).toBeLessThan(5_000);
      const own = exchanges();
      expect(own.at(-1)?.token).toBe(good);
      const all = await shown(namespace, buckets, lines);
      for (const e of own) {
        for (const secret of [e.token, ...e.answered]) expect(all).not.toContain(secret);
      }
    } finally {
      expect(await op.stop()).toBe(0);
    }
  }, 60_000);

  it("asks STS again at the next call when the storage refuses credentials it revoked", async () => {
    const token = issuer.token("system:serviceaccount:aidc-system:aidc-revoked", 3_600);
    // Held Buckets are tried again after 2 s; the credentials would be kept for 55 min.
    const { tokenFile, op, buckets, name, exchanges } = await started("-revoked", token, 2_000);
    try {
      await buckets.create("b", { name, tags: { v: "1" } });
      await buckets.waitForCondition("b", "Ready", "True", "Available", 30_000);
      const [first] = exchanges();
      const [accessKeyId = "", secretAccessKey = "", sessionToken = ""] = first?.answered ?? [];
      await revokeOwnTokens(s3.server, { accessKeyId, secretAccessKey, sessionToken });
      await buckets.patchSpec("b", { tags: { v: "2" } });
      expect(await heldMessage(buckets)).toContain(
        `(the S3 credentials of web identity (role ${ROLE}, token file ${tokenFile}) were refused: expired, revoked or not valid for this storage; the next call asks for new ones)`,
      );
      const back = await buckets.waitFor(
        "b",
        (o: KubeObject) =>
          conditionOf(o, "Synced")?.status === "True" &&
          conditionOf(o, "Synced")?.observedGeneration === o.metadata?.generation,
        15_000,
      );
      expect(conditionOf(back, "Ready")?.status).toBe("True");
      expect(exchanges().map((e) => e.token)).toEqual([token, token]);
      expect((await s3.client().getTags(name)).v).toBe("2");
    } finally {
      expect(await op.stop()).toBe(0);
    }
  }, 60_000);

  it("exchanges with an https:// STS through HTTPS_PROXY, trusting the CAs the process trusts", async () => {
    // MinIO's STS behind TLS for a name only the proxy resolves; the CA, as a pod's
    // NODE_EXTRA_CA_CERTS adds it.
    const front = new TlsFront(STS_HOST, Number(new URL(s3.server.url).port));
    await front.start();
    const trusted = getCACertificates("default");
    setDefaultCACertificates([...trusted, front.ca.toString()]);
    const tunnels = new ConnectProxy({ [STS_HOST]: "127.0.0.1" });
    await tunnels.start();
    const token = issuer.token("system:serviceaccount:aidc-system:aidc-tls", 3_600);
    const { op, buckets, name, exchanges } = await started("-tls", token, undefined, {
      AWS_ENDPOINT_URL_STS: `https://${STS_HOST}:${front.port}`,
      HTTPS_PROXY: tunnels.url,
    });
    try {
      await buckets.create("b", { name });
      await buckets.waitForCondition("b", "Ready", "True", "Available", 30_000);
      expect(tunnels.targets).toContain(`${STS_HOST}:${front.port}`);
      // Not the plain-http proxy: the exchange went through the tunnel.
      expect(exchanges()).toEqual([]);
    } finally {
      expect(await op.stop()).toBe(0);
      setDefaultCACertificates(trusted);
      await tunnels.stop();
      await front.stop();
    }
  }, 60_000);

  it("writes the credentials it renews into a Bucket's exportTo Secret", async () => {
    const token = issuer.token("system:serviceaccount:aidc-system:aidc-export", 3_600);
    const { namespace, tokenFile, op, buckets, name, exchanges } = await started("-export", token);
    const kube = new KubeClient(kc);
    const exported = async () => {
      const secret = await kube
        .get<KubeObject & { data?: Record<string, string> }>(SECRETS, { namespace, name: "keys" })
        .catch(() => undefined);
      const data = secret?.data ?? {};
      return ["AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"].map((k) =>
        Buffer.from(data[k] ?? "", "base64").toString(),
      );
    };
    try {
      await buckets.create("b", { name, tags: { v: "1" }, exportTo: { secretName: "keys" } });
      await buckets.waitForCondition("b", "Ready", "True", "Available", 30_000);
      await vi.waitFor(async () => expect(await exported()).toEqual(exchanges()[0]?.answered), {
        timeout: 10_000,
      });
      await writeFile(
        tokenFile,
        issuer.token("system:serviceaccount:aidc-system:aidc-export", 3_600),
      );
      await new Promise((r) => setTimeout(r, 500));
      await buckets.patchSpec("b", { tags: { v: "2" } });
      await vi.waitFor(async () => expect(await exported()).toEqual(exchanges()[1]?.answered), {
        timeout: 10_000,
      });
      expect(exchanges()).toHaveLength(2);
    } finally {
      expect(await op.stop()).toBe(0);
    }
  }, 60_000);
});
