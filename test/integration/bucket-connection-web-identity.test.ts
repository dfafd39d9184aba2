/**
 * ServiceConnections whose S3 credentials come from web identity of their own
 * (`spec.objectStorage.webIdentity`), under `aidc-operator run` on the real API server
 * and MinIO's STS: MinIO trusts a local OIDC issuer as two roles, each with a policy
 * that allows only its team's bucket names. The operator has one projected token
 * (`AWS_WEB_IDENTITY_TOKEN_FILE`, no role of its own) whose audience both roles accept;
 * each connection exchanges it for its own role, through the environment's HTTP_PROXY
 * (the STS host is a name only the proxy knows), and each team's Bucket is made with its
 * connection's credentials; a bucket name of the other team is refused with S3's
 * AccessDenied. Without a token file, a connection's Bucket is held with
 * S3CredentialsRefused and the connection is not Ready, both naming the missing file, and
 * the operator runs on. No token and no credential reaches the log, an Event or a status.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bucketController } from "../../src/controllers/bucket/controller.js";
import { serviceConnectionController } from "../../src/controllers/connections/controller.js";
import { SECRETS } from "../../src/controllers/connections/secrets.js";
import { bucketCrd } from "../../src/crds/bucket.js";
import { serviceConnectionCrd } from "../../src/crds/serviceconnection.js";
import { type RunningEmulator, startEmulator } from "../../src/emulator/server.js";
import { KubeClient } from "../../src/runtime/kube.js";
import { linesInto } from "../support/captured-log.js";
import { installCrds } from "../support/crds.js";
import { adminKubeConfig, createNamespace } from "../support/kube.js";
import { conditionOf, EVENTS, ObjectsOf } from "../support/managed.js";
import { addMinioPolicy, type S3Policy } from "../support/minio-iam.js";
import { minioRoleArn, minioRolesEnv, OidcIssuer } from "../support/oidc-issuer.js";
import { TEST_API_KEY } from "../support/operator.js";
import { RecordingProxy, STS_HOST } from "../support/recording-proxy.js";
import { runInProcessWith } from "../support/run-operator.js";
import { startTestS3, type TestS3 } from "../support/s3.js";

const b64 = (s: string) => Buffer.from(s).toString("base64");

/**
 * Every S3 action on the buckets named `prefix`* and their objects; on the others only
 * listing (a HEAD of a name then says absent, not another account's: the creation is
 * what the policy refuses).
 */
const bucketsNamed = (prefix: string): S3Policy => ({
  Version: "2012-10-17",
  Statement: [
    {
      Effect: "Allow",
      Action: ["s3:ListAllMyBuckets", "s3:ListBucket"],
      Resource: ["arn:aws:s3:::*"],
    },
    {
      Effect: "Allow",
      Action: ["s3:*"],
      Resource: [`arn:aws:s3:::${prefix}*`, `arn:aws:s3:::${prefix}*/*`],
    },
  ],
});

/** The two roles: MinIO's provider per client id, each with its policy. */
const ROLES = {
  TEAMA: { clientId: "aidc-team-a", policy: "team-a" },
  TEAMB: { clientId: "aidc-team-b", policy: "team-b" },
};

describe("a ServiceConnection's Buckets through web identity of its own", () => {
  const kc = adminKubeConfig();
  const kube = new KubeClient(kc);
  let emulator: RunningEmulator;
  let issuer: OidcIssuer;
  let s3: TestS3;
  let proxy: RecordingProxy;
  let dir: string;
  let ops: string;
  const connections: string[] = [];

  beforeAll(async () => {
    await installCrds(kc);
    emulator = await startEmulator({ apiKey: TEST_API_KEY });
    issuer = await new OidcIssuer().start();
    s3 = await startTestS3({ env: minioRolesEnv(issuer, ROLES) });
    await addMinioPolicy(s3.server, "team-a", bucketsNamed("team-a-"));
    await addMinioPolicy(s3.server, "team-b", bucketsNamed("team-b-"));
    proxy = new RecordingProxy();
    await proxy.start();
    dir = await mkdtemp(join(tmpdir(), "aidc-conn-web-identity-"));
    ops = await createNamespace(kc, "cwi-ops");
    await kube.create(SECRETS, {
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: "api-key", namespace: ops },
      data: { apiKey: b64(TEST_API_KEY) },
    });
  });
  afterAll(async () => {
    for (const name of connections) {
      const key = { namespace: "", name };
      await kube
        .patch(serviceConnectionCrd, key, { metadata: { finalizers: null } })
        .catch(() => undefined);
      await kube.delete(serviceConnectionCrd, key).catch(() => undefined);
    }
    await proxy?.stop();
    await s3?.stop();
    await issuer?.stop();
    await emulator?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  /** `aidc-operator run` with ServiceConnections and Buckets, its log in `lines`. */
  const operator = (namespaces: string[], lines: string[], env: Record<string, string>) =>
    runInProcessWith(
      {
        service: { baseUrl: emulator.url, allowInsecureHttp: true },
        // No endpoint, no credentials: the connections are the only object storage.
        connections: { secretNamespace: ops },
        watchNamespaces: namespaces,
        holdBackoff: { baseMs: 1_000, maxMs: 2_000 },
        resyncPeriodMs: 0,
        server: { port: 0, host: "127.0.0.1" },
        log: { level: "debug" },
      },
      {
        controllerFactories: [bucketController, serviceConnectionController],
        env: { AIDC_API_KEY: TEST_API_KEY, HTTP_PROXY: proxy.url, ...env },
        logDestination: linesInto(lines),
      },
    );

  /** A connection for `namespace` whose credentials are `role`'s. */
  const connect = async (name: string, namespace: string, roleArn: string) => {
    connections.push(name);
    await kube.create(serviceConnectionCrd, {
      apiVersion: "aidc.io/v1alpha1",
      kind: "ServiceConnection",
      metadata: { name },
      spec: {
        baseUrl: emulator.url,
        allowInsecureHttp: true,
        apiKeySecretRef: { namespace: ops, name: "api-key" },
        objectStorage: {
          endpoint: s3.server.url,
          webIdentity: {
            roleArn,
            roleSessionName: name,
            stsEndpoint: `http://${STS_HOST}:${new URL(s3.server.url).port}`,
          },
        },
        allowedNamespaces: { names: [namespace] },
      },
    });
    return new ObjectsOf(kube, serviceConnectionCrd, "");
  };

  /** Everything the operator showed: the objects, the Events of `namespaces`, the log. */
  const shown = async (namespaces: string[], objects: unknown[], lines: string[]) => {
    const events = await Promise.all(namespaces.map((n) => kube.list(EVENTS, n)));
    return JSON.stringify([objects, events.map((e) => e.items), lines]);
  };

  it("makes each team's Bucket with its own connection's role, and the other team's names are AccessDenied", async () => {
    const [teamA, teamB] = await Promise.all([
      createNamespace(kc, "cwi-team-a"),
      createNamespace(kc, "cwi-team-b"),
    ]);
    const suffix = teamA.split("-").pop();
    const tokenFile = join(dir, "token");
    // One token of the operator's ServiceAccount, for the audiences of both roles.
    const token = issuer.token("system:serviceaccount:aidc-system:aidc-operator", 3_600, {
      audience: [ROLES.TEAMA.clientId, ROLES.TEAMB.clientId],
    });
    await writeFile(tokenFile, token);
    const roleA = minioRoleArn(ROLES.TEAMA.clientId);
    const roleB = minioRoleArn(ROLES.TEAMB.clientId);
    const seen = proxy.exchanges.length;
    const lines: string[] = [];
    const op = await operator([teamA, teamB], lines, { AWS_WEB_IDENTITY_TOKEN_FILE: tokenFile });
    try {
      const conns = await connect(`${teamA}-account`, teamA, roleA);
      await connect(`${teamB}-account`, teamB, roleB);
      const a = new ObjectsOf(kube, bucketCrd, teamA);
      const b = new ObjectsOf(kube, bucketCrd, teamB);
      const ref = (ns: string) => ({ connectionRef: { name: `${ns}-account` } });
      await a.create("data", { name: `team-a-${suffix}`, tags: { v: "a" }, ...ref(teamA) });
      await b.create("data", { name: `team-b-${suffix}`, tags: { v: "b" }, ...ref(teamB) });
      // Team B's connection may not touch a team-a name: its role's policy refuses it.
      await b.create("other", { name: `team-a-${suffix}-b`, ...ref(teamB) });
      await a.waitForCondition("data", "Ready", "True", "Available", 30_000);
      await b.waitForCondition("data", "Ready", "True", "Available", 30_000);
      const denied = await b.waitForCondition("other", "Synced", "False", "S3AccessDenied", 30_000);
      expect(conditionOf(denied, "Synced")?.message).toContain("AccessDenied");
      expect(conditionOf(denied, "Synced")?.message).toContain("s3:CreateBucket");
      expect((await s3.client().getTags(`team-a-${suffix}`)).v).toBe("a");
      expect((await s3.client().getTags(`team-b-${suffix}`)).v).toBe("b");
      expect(await s3.client().headBucket(`team-a-${suffix}-b`)).toBe("Absent");
      // One exchange per role, each with the one token, through the proxy.
      const own = proxy.exchanges.slice(seen);
      expect(own.map((e) => e.roleArn).sort()).toEqual([roleA, roleB].sort());
      expect(own.every((e) => e.token === token)).toBe(true);
      const [connA, connB] = await Promise.all([
        conns.waitForCondition(`${teamA}-account`, "Ready", "True", "Connected"),
        conns.waitForCondition(`${teamB}-account`, "Ready", "True", "Connected"),
      ]);
      const objects = [connA, connB, await a.get("data"), await b.get("data"), denied];
      const all = await shown([teamA, teamB], objects, lines);
      for (const e of own) {
        expect(e.answered).toHaveLength(3);
        for (const secret of [e.token, ...e.answered]) expect(all).not.toContain(secret);
      }
    } finally {
      expect(await op.stop()).toBe(0);
    }
  }, 90_000);

  it("holds a connection's Bucket and says the connection is not Ready when the operator has no token file", async () => {
    const team = await createNamespace(kc, "cwi-none");
    const lines: string[] = [];
    // No AWS_WEB_IDENTITY_TOKEN_FILE.
    const op = await operator([team], lines, {});
    try {
      const name = `${team}-account`;
      const conns = await connect(name, team, minioRoleArn(ROLES.TEAMA.clientId));
      const buckets = new ObjectsOf(kube, bucketCrd, team);
      await buckets.create("data", { name: `team-a-${team}`, connectionRef: { name } });
      const held = await buckets.waitForCondition(
        "data",
        "Synced",
        "False",
        "S3CredentialsRefused",
        30_000,
      );
      expect(conditionOf(held, "Synced")?.message).toContain(
        "AWS_WEB_IDENTITY_TOKEN_FILE is not set",
      );
      const conn = await conns.waitForCondition(name, "Ready", "False", "WebIdentityUnavailable");
      expect(conditionOf(conn, "Ready")?.message).toContain(
        `spec.objectStorage.webIdentity (role ${minioRoleArn(ROLES.TEAMA.clientId)}) gets no credentials`,
      );
      expect(conditionOf(conn, "Ready")?.message).toContain("AWS_WEB_IDENTITY_TOKEN_FILE");
    } finally {
      expect(await op.stop()).toBe(0);
    }
  }, 60_000);
});
