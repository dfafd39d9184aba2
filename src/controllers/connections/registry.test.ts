import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { serviceConnectionCrd } from "../../crds/serviceconnection.js";
import { type EmulatedService, startEmulatedService } from "../../emulator/harness.js";
import type { CacheReader } from "../../runtime/cache.js";
import { SecretRedactor } from "../../runtime/outbound-guards.js";
import {
  formatKey,
  type KubeObject,
  type ObjectKey,
  type ResourceDescriptor,
  resourceId,
} from "../../runtime/resource.js";
import { ServiceClient } from "../../service/client.js";
import { ServiceAuthError } from "../../service/errors.js";
import type { ConnectionClientSettings } from "./client.js";
import {
  chooseConnection,
  connectionMetricLabel,
  NAMESPACES,
  namespaceAllowed,
  ServiceConnections,
  selectorMatches,
} from "./registry.js";
import { SECRETS } from "./secrets.js";

const JOBS: ResourceDescriptor = {
  group: "aidc.io",
  version: "v1alpha1",
  plural: "trainingjobs",
  kind: "TrainingJob",
  namespaced: true,
};

/** A cache of the objects given, changed with `put` and `remove`, counting reads of Secrets. */
function cacheOf(objects: [ResourceDescriptor, KubeObject][]) {
  const key = (r: ResourceDescriptor, k: ObjectKey | string) =>
    `${resourceId(r)}:${typeof k === "string" ? k : formatKey(k)}`;
  const keyOf = (r: ResourceDescriptor, o: KubeObject) =>
    key(r, { namespace: o.metadata?.namespace ?? "", name: o.metadata?.name ?? "" });
  const map = new Map<string, [ResourceDescriptor, KubeObject]>();
  const put = (r: ResourceDescriptor, o: KubeObject) => map.set(keyOf(r, o), [r, o]);
  for (const [r, o] of objects) put(r, o);
  const counts = { secretReads: 0 };
  const cache: CacheReader = {
    get: <T extends KubeObject>(r: ResourceDescriptor, k: ObjectKey | string) => {
      if (r === SECRETS) counts.secretReads++;
      return map.get(key(r, k))?.[1] as T | undefined;
    },
    list: <T extends KubeObject>(r: ResourceDescriptor) =>
      [...map.values()].filter(([kind]) => kind === r).map(([, o]) => o as T),
    byIndex: () => [],
  };
  const remove = (r: ResourceDescriptor, o: KubeObject) => map.delete(keyOf(r, o));
  return { cache, counts, put, remove };
}

const b64 = (s: string) => Buffer.from(s).toString("base64");
const connection = (name: string, allowed: string[], extra: Record<string, unknown> = {}) => ({
  apiVersion: "aidc.io/v1alpha1",
  kind: "ServiceConnection",
  metadata: { name, uid: `uid-${name}`, generation: 1 },
  spec: {
    baseUrl: `https://${name}.example`,
    allowInsecureHttp: false,
    apiKeySecretRef: { namespace: "ops", name: `${name}-key`, key: "apiKey" },
    allowedNamespaces: { names: allowed },
    ...extra,
  },
});
const secret = (name: string, data: Record<string, string>) => ({
  metadata: { namespace: "ops", name, resourceVersion: "7" },
  data: Object.fromEntries(Object.entries(data).map(([k, v]) => [k, b64(v)])),
});
const job = (name: string, ns: string, ref?: string) => ({
  metadata: { namespace: ns, name },
  spec: ref ? { connectionRef: { name: ref } } : {},
});

/** The registry over `objects`; every connection's client sends to `serviceUrl` when given. */
function world(objects: [ResourceDescriptor, KubeObject][], serviceUrl?: string) {
  const built: ConnectionClientSettings[] = [];
  const redactor = new SecretRedactor();
  const defaultClient = new ServiceClient({
    baseUrl: "https://default.example",
    apiKey: () => "k",
  });
  const connections = new ServiceConnections({
    defaultClient,
    secretNamespace: "ops",
    redactor,
    newClient: (s) => {
      built.push(s);
      return new ServiceClient({
        baseUrl: serviceUrl ?? s.baseUrl,
        apiKey: s.apiKey,
        rateLimit: null,
        retry: { maxAttempts: 1, baseDelayMs: 1, maxDelayMs: 1 },
      });
    },
  });
  const cache = cacheOf(objects);
  connections.attach(cache.cache);
  return { connections, built, redactor, defaultClient, ...cache };
}

const TENANTS: [ResourceDescriptor, KubeObject][] = [
  [
    serviceConnectionCrd,
    connection("conn-a", ["team-a"], { limits: { ratePerSecond: 5, burst: 2 } }),
  ],
  [serviceConnectionCrd, connection("conn-b", ["team-b"])],
  [SECRETS, secret("conn-a-key", { apiKey: "key-of-tenant-a-0001" })],
  [
    NAMESPACES,
    { metadata: { name: "team-b", annotations: { "aidc.io/service-connection": "conn-b" } } },
  ],
  [JOBS, job("a1", "team-a", "conn-a")],
  [JOBS, job("b1", "team-b")],
  [JOBS, job("x1", "team-b", "conn-a")],
  [JOBS, job("d1", "team-c")],
];

describe("ServiceConnections", () => {
  it("gives an object the connection its connectionRef names, with that connection's limits", async () => {
    const { connections, built, redactor } = world(TENANTS);
    const a = connections.forObject(job("a1", "team-a", "conn-a"));
    expect(a.name).toBe("conn-a");
    expect(built).toHaveLength(1);
    expect(built[0]).toMatchObject({
      name: "conn-a",
      baseUrl: "https://conn-a.example",
      rateLimit: { ratePerSecond: 5, burst: 2 },
    });
    expect(await built[0]?.apiKey()).toBe("key-of-tenant-a-0001");
    expect(redactor.redact("echo key-of-tenant-a-0001")).toBe("echo [REDACTED]");
    // One client per connection, reused while the connection is unchanged.
    expect(connections.forObject(job("a2", "team-a", "conn-a")).service).toBe(a.service);
  });

  it("gives an object its namespace's annotated connection, else the default", () => {
    const { connections, defaultClient } = world(TENANTS);
    expect(connections.forObject(job("b1", "team-b")).name).toBe("conn-b");
    const d = connections.forObject(job("d1", "team-c"));
    expect(d.name).toBeUndefined();
    expect(d.service).toBe(defaultClient);
  });

  it("refuses a connection that does not allow the object's namespace, terminally", () => {
    const { connections, built } = world(TENANTS);
    expect(() => connections.forObject(job("x1", "team-b", "conn-a"))).toThrow(
      expect.objectContaining({
        reason: "ConnectionNotAllowed",
        retryable: false,
        external: true,
        message:
          "the ServiceConnection conn-a (named by the connectionRef) does not allow namespace team-b in spec.allowedNamespaces; nothing is sent to the service. Name a connection this namespace may use, or have the connection allow it",
      }),
    );
    expect(built).toHaveLength(0);
  });

  it("waits for a connection that does not exist (a Normal event), naming where it was named", () => {
    const { connections, put } = world(TENANTS);
    expect(() => connections.forObject(job("y", "team-a", "nope"))).toThrow(
      expect.objectContaining({
        reason: "ConnectionNotFound",
        retryable: true,
        waiting: true,
        message:
          "the ServiceConnection nope (named by the connectionRef) does not exist; nothing is sent to the service until it does",
      }),
    );
    put(NAMESPACES, {
      metadata: { name: "team-e", annotations: { "aidc.io/service-connection": "gone" } },
    });
    expect(() => connections.forObject(job("e1", "team-e"))).toThrow(
      expect.objectContaining({
        waiting: true,
        message: expect.stringMatching(
          /^the ServiceConnection gone \(named by the namespace annotation\) does not exist;/,
        ),
      }),
    );
  });

  it("says why a connection's Secret cannot be read, without its value", () => {
    const { connections } = world(TENANTS);
    const spec = connection("conn-b", []).spec;
    expect(connections.secrets.problemOf(spec)).toBe("the Secret ops/conn-b-key does not exist");
    expect(
      connections.secrets.problemOf({
        ...spec,
        apiKeySecretRef: { namespace: "elsewhere", name: "k", key: "apiKey" },
      }),
    ).toMatch(/outside ops, the one namespace the operator reads Secrets in/);
    expect(
      connections.secrets.problemOf({
        ...spec,
        apiKeySecretRef: { namespace: "ops", name: "conn-a-key", key: "other" },
      }),
    ).toBe("the Secret ops/conn-a-key has no key other");
  });

  it("reads a connection's S3 credentials from its Secret", async () => {
    const storage = {
      objectStorage: {
        endpoint: "https://s3.example",
        region: "r1",
        credentialsSecretRef: {
          namespace: "ops",
          name: "s3",
          accessKeyIdKey: "id",
          secretAccessKeyKey: "secret",
        },
      },
    };
    const { connections, redactor, put } = world([
      [serviceConnectionCrd, connection("conn-s", ["*"], storage)],
      [SECRETS, secret("s3", { id: "AKIAEXAMPLE0001", secret: "s3-secret-value-0001" })],
    ]);
    const s3 = connections.forObject(job("j", "any", "conn-s")).objectStorage;
    expect(s3?.endpoint).toBe("https://s3.example");
    expect(s3?.region).toBe("r1");
    expect(await s3?.credentials()).toEqual({
      accessKeyId: "AKIAEXAMPLE0001",
      secretAccessKey: "s3-secret-value-0001",
    });
    expect(redactor.redact("s3-secret-value-0001")).toBe("[REDACTED]");
    // A connection that no longer declares object storage gives no key pair to a holder.
    put(serviceConnectionCrd, connection("conn-s", ["*"]));
    await expect(s3?.credentials()).rejects.toThrow(
      "the ServiceConnection conn-s declares no object storage",
    );
  });
});

describe("a ServiceConnection's client and its API key", () => {
  const KEY = "key-of-tenant-a-0001";
  const ROTATED = "key-of-tenant-a-0002";
  let svc: EmulatedService;
  beforeAll(async () => {
    svc = await startEmulatedService({ emulator: { apiKey: KEY } });
  });
  afterAll(() => svc.stop());

  const setUp = () => {
    svc.emulator.setApiKey(KEY);
    const w = world(TENANTS, svc.emulator.url);
    const client = w.connections.forObject(job("a1", "team-a", "conn-a")).service;
    const keySecret = (data: Record<string, string>) => ({
      ...secret("conn-a-key", data),
      metadata: { namespace: "ops", name: "conn-a-key", resourceVersion: "8" },
    });
    return { ...w, client, keySecret };
  };

  it("is told the key once: calls read no Secret, and a rotated Secret is sent at the next call", async () => {
    const { connections, client, cache, counts, put, keySecret, redactor } = setUp();
    const before = counts.secretReads;
    for (let i = 0; i < 5; i++) await client.listNas();
    expect(counts.secretReads).toBe(before);

    svc.emulator.setApiKey(ROTATED);
    const rotated = keySecret({ apiKey: ROTATED });
    put(SECRETS, rotated);
    expect(connections.secretChanged(rotated, cache)).toEqual([{ namespace: "", name: "conn-a" }]);
    const told = counts.secretReads;
    const since = svc.emulator.requestLog.read().at(-1)?.seq ?? 0;
    await client.listNas();
    await client.listNas();
    expect(counts.secretReads).toBe(told);
    expect(svc.emulator.requestLog.read({ since }).map((e) => e.authorized)).toEqual([true, true]);
    expect(redactor.redact(`echo ${ROTATED}`)).toBe("echo [REDACTED]");
  });

  it.each([
    {
      reason: "the Secret is deleted",
      change: (w: ReturnType<typeof setUp>) => w.remove(SECRETS, w.keySecret({})),
      message: "the API key could not be read: the Secret ops/conn-a-key does not exist",
    },
    {
      reason: "its key is removed",
      change: (w: ReturnType<typeof setUp>) => w.put(SECRETS, w.keySecret({ other: "x" })),
      message: "the API key could not be read: the Secret ops/conn-a-key has no key apiKey",
    },
  ])("fails the next call, sending nothing, when $reason", async ({ change, message }) => {
    const w = setUp();
    await w.client.listNas();
    change(w);
    w.connections.secretChanged(w.keySecret({}), w.cache);
    const since = svc.emulator.requestLog.read().at(-1)?.seq ?? 0;
    const err = await w.client.listNas().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ServiceAuthError);
    expect((err as Error).message).toBe(message);
    expect(svc.emulator.requestLog.read({ since })).toEqual([]);

    // The Secret back: the client is told its key again.
    const back = w.keySecret({ apiKey: KEY });
    w.put(SECRETS, back);
    w.connections.secretChanged(back, w.cache);
    await expect(w.client.listNas()).resolves.toBeDefined();
  });

  it("fails a call of a client still held after its connection is deleted, sending nothing", async () => {
    const { connections, client, remove } = setUp();
    await client.listNas();
    remove(serviceConnectionCrd, connection("conn-a", ["team-a"]));
    connections.forget("conn-a");
    const since = svc.emulator.requestLog.read().at(-1)?.seq ?? 0;
    const err = await client.listNas().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ServiceAuthError);
    expect((err as Error).message).toBe(
      "the API key could not be read: the ServiceConnection conn-a no longer exists",
    );
    expect(svc.emulator.requestLog.read({ since })).toEqual([]);
  });

  it("lets a client replaced by a new generation read its key at each attempt", async () => {
    const { connections, client, put, counts } = setUp();
    const changed = connection("conn-a", ["team-a"], {
      apiKeySecretRef: { namespace: "ops", name: "conn-a-key-2", key: "apiKey" },
    });
    put(serviceConnectionCrd, { ...changed, metadata: { ...changed.metadata, generation: 2 } });
    put(SECRETS, secret("conn-a-key-2", { apiKey: ROTATED }));
    svc.emulator.setApiKey(ROTATED);
    const next = connections.forObject(job("a1", "team-a", "conn-a")).service;
    expect(next).not.toBe(client);
    const before = counts.secretReads;
    await next.listNas();
    expect(counts.secretReads).toBe(before);
    // A reconcile still holding the old client sends the new secretRef's key, not the one
    // it was told (the emulator now takes only the new one).
    await expect(client.listNas()).resolves.toBeDefined();
  });
});

const obj = (ref?: string) => ({
  metadata: { namespace: "team-a", name: "x" },
  spec: ref ? { connectionRef: { name: ref } } : {},
});
const ns = (annotations?: Record<string, string>, labels?: Record<string, string>) => ({
  name: "team-a",
  annotations,
  labels,
});

describe("chooseConnection", () => {
  it.each([
    {
      reason: "the object's connectionRef wins over the namespace annotation",
      o: obj("conn-a"),
      n: ns({ "aidc.io/service-connection": "conn-b" }),
      want: { kind: "named", name: "conn-a", source: "connectionRef" },
    },
    {
      reason: "without a ref, the namespace annotation names the connection",
      o: obj(),
      n: ns({ "aidc.io/service-connection": " conn-b " }),
      want: { kind: "named", name: "conn-b", source: "namespace annotation" },
    },
    { reason: "neither: the default connection", o: obj(), n: ns(), want: { kind: "default" } },
    {
      reason: "an unknown namespace: the default connection",
      o: obj(),
      n: undefined,
      want: { kind: "default" },
    },
  ])("$reason", ({ o, n, want }) => {
    expect(chooseConnection(o, n)).toEqual(want);
  });
});

describe("namespaceAllowed", () => {
  it.each([
    { reason: "nothing allowed: no namespace", allowed: undefined, want: false },
    { reason: "listed by name", allowed: { names: ["team-a"] }, want: true },
    { reason: "another name", allowed: { names: ["team-b"] }, want: false },
    { reason: "* allows every namespace", allowed: { names: ["*"] }, want: true },
    {
      reason: "matched by the selector",
      allowed: { selector: { matchLabels: { team: "a" } } },
      want: true,
    },
    {
      reason: "not matched by the selector",
      allowed: { selector: { matchLabels: { team: "b" } } },
      want: false,
    },
  ])("$reason", ({ allowed, want }) => {
    expect(namespaceAllowed({ allowedNamespaces: allowed }, ns({}, { team: "a" }))).toBe(want);
  });
});

describe("selectorMatches", () => {
  const labels = { team: "a", tier: "gold" };
  it.each([
    { reason: "empty selector matches all", sel: {}, want: true },
    {
      reason: "In",
      sel: { matchExpressions: [{ key: "tier", operator: "In" as const, values: ["gold"] }] },
      want: true,
    },
    {
      reason: "NotIn",
      sel: { matchExpressions: [{ key: "tier", operator: "NotIn" as const, values: ["gold"] }] },
      want: false,
    },
    {
      reason: "Exists",
      sel: { matchExpressions: [{ key: "team", operator: "Exists" as const }] },
      want: true,
    },
    {
      reason: "DoesNotExist",
      sel: { matchExpressions: [{ key: "team", operator: "DoesNotExist" as const }] },
      want: false,
    },
  ])("$reason", ({ sel, want }) => {
    expect(selectorMatches(sel, labels)).toBe(want);
  });
});

const chosen = (obj: KubeObject) =>
  (obj as { spec?: { connectionRef?: { name?: string } } }).spec?.connectionRef?.name;

describe("connectionMetricLabel", () => {
  const label = connectionMetricLabel({
    chosenName: chosen,
    // Only the ServiceConnection team-a is cached.
    connectionObject: (name) => (name === "team-a" ? { metadata: { name } } : undefined),
  });
  it("labels a key the cache has no object of as the default connection's", () => {
    expect(label(undefined)).toBe("_default");
  });
  it.each([
    {
      case: "an object of the default connection",
      obj: { kind: "NasVolume", spec: {} },
      want: "_default",
    },
    {
      case: "an object of an existing connection",
      obj: { kind: "NasVolume", spec: { connectionRef: { name: "team-a" } } },
      want: "team-a",
    },
    {
      case: "an object naming a connection that does not exist",
      obj: { kind: "NasVolume", spec: { connectionRef: { name: "typo-1234" } } },
      want: "_missing",
    },
    {
      case: "a ServiceConnection: its own name",
      obj: { kind: "ServiceConnection", metadata: { name: "team-b" } },
      want: "team-b",
    },
  ])("labels $case as $want", ({ obj, want }) => {
    expect(label(obj as KubeObject)).toBe(want);
  });
});
