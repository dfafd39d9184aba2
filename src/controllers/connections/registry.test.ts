import { describe, expect, it } from "vitest";
import { serviceConnectionCrd } from "../../crds/serviceconnection.js";
import type { CacheReader } from "../../runtime/cache.js";
import { SecretRedactor } from "../../runtime/redaction.js";
import {
  formatKey,
  type KubeObject,
  type ObjectKey,
  type ResourceDescriptor,
  resourceId,
} from "../../runtime/resource.js";
import { ServiceClient } from "../../service/client.js";
import { type ConnectionClientSettings, SECRETS, ServiceConnections } from "./registry.js";
import { NAMESPACES } from "./resolution.js";

const JOBS: ResourceDescriptor = {
  group: "aidc.io",
  version: "v1alpha1",
  plural: "trainingjobs",
  kind: "TrainingJob",
  namespaced: true,
};

/** A cache of fixed objects. */
function cacheOf(objects: [ResourceDescriptor, KubeObject][]): CacheReader {
  const key = (r: ResourceDescriptor, k: ObjectKey | string) =>
    `${resourceId(r)}:${typeof k === "string" ? k : formatKey(k)}`;
  const map = new Map<string, KubeObject>();
  for (const [r, o] of objects) {
    map.set(key(r, { namespace: o.metadata?.namespace ?? "", name: o.metadata?.name ?? "" }), o);
  }
  return {
    get: <T extends KubeObject>(r: ResourceDescriptor, k: ObjectKey | string) =>
      map.get(key(r, k)) as T | undefined,
    list: () => [],
    byIndex: () => [],
  };
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

function world(objects: [ResourceDescriptor, KubeObject][]) {
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
      return new ServiceClient({ baseUrl: s.baseUrl, apiKey: s.apiKey, rateLimit: null });
    },
  });
  connections.attach(cacheOf(objects));
  return { connections, built, redactor, defaultClient };
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
      expect.objectContaining({ reason: "ConnectionNotAllowed", retryable: false, external: true }),
    );
    expect(built).toHaveLength(0);
  });

  it("waits for a connection that does not exist", () => {
    const { connections } = world(TENANTS);
    expect(() => connections.forObject(job("y", "team-a", "nope"))).toThrow(
      expect.objectContaining({ reason: "ConnectionNotFound", retryable: true }),
    );
  });

  it("says why a connection's Secret cannot be read, without its value", () => {
    const { connections } = world(TENANTS);
    const spec = connection("conn-b", []).spec;
    expect(connections.secretProblem(spec)).toBe("the Secret ops/conn-b-key does not exist");
    expect(
      connections.secretProblem({
        ...spec,
        apiKeySecretRef: { namespace: "elsewhere", name: "k", key: "apiKey" },
      }),
    ).toMatch(/outside ops, the one namespace the operator reads Secrets in/);
    expect(
      connections.secretProblem({
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
    const { connections, redactor } = world([
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
  });
});
