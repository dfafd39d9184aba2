import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { root } from "../../scripts/generated-files.js";
import { operatorConfigSchema } from "../../src/config/schema.js";
import { SETTINGS } from "../../src/config/settings.js";
import { resolveEndpointTable } from "../../src/service/endpoints.js";
import {
  CHART_DIR,
  CHART_TEST_BASE_URL,
  helmTemplate,
  helmUninstall,
  installChartCrds,
  parseObjects,
  type RenderedObject,
  randomSuffix,
  runTool,
  setArgs,
  storedApiKeyMode,
} from "../support/chart.js";
import { adminKubeConfig, createNamespace } from "../support/kube.js";

/**
 * The Helm chart against the real control plane: lint, values schema, server-side
 * dry-run of what it renders, and a real install. There is no kubelet, so the
 * Deployment runs no pod: the install is proven by the objects it creates.
 */

/** The `kind/name` of each object, as `kubectl get -o name` prints it (lower-case kind). */
function objectRefs(objects: RenderedObject[]): string[] {
  return objects.map((o) => `${o.metadata.namespace ?? ""}/${o.kind}/${o.metadata.name}`).sort();
}

/** `--set` values with the base URL the chart requires. */
const BASE_URL = { "service.baseUrl": CHART_TEST_BASE_URL };

/** The operator config file the rendered ConfigMap holds. */
function renderedConfig(objects: RenderedObject[]): unknown {
  const [configMap] = objects.filter((o) => o.kind === "ConfigMap");
  const configYaml = (configMap?.data as Record<string, string> | undefined)?.["config.yaml"];
  return parse(configYaml ?? "");
}

/** The rendered objects of a kind. */
function ofKind(objects: RenderedObject[], kind: string): RenderedObject[] {
  return objects.filter((o) => o.kind === kind);
}

describe("the Helm chart", () => {
  const kc = adminKubeConfig();
  let namespace = "";
  const releases: string[] = [];

  beforeAll(async () => {
    await installChartCrds();
    namespace = await createNamespace(kc, "chart");
  });

  afterAll(async () => {
    for (const release of releases) {
      await helmUninstall(release, namespace).catch(() => undefined);
    }
  });

  it("passes helm lint --strict with the base URL alone and with every option set", async () => {
    await runTool("helm", ["lint", "--strict", CHART_DIR, ...setArgs(BASE_URL)]);
    await runTool("helm", [
      "lint",
      "--strict",
      CHART_DIR,
      ...setArgs({
        apiKeySecret: "my-key",
        "watchNamespaces[0]": "team-a",
        "service.baseUrl": "https://aidc.example.com/api",
        "serviceMonitor.enabled": true,
        "prometheusRule.enabled": true,
        "dashboards.enabled": true,
        "networkPolicy.enabled": true,
        replicas: 3,
      }),
    ]);
  });

  it("refuses an unknown value and a value of the wrong type, naming the key", async () => {
    await expect(helmTemplate("r", "ns", { replicaCount: 2 })).rejects.toThrow(
      /additional properties 'replicaCount' not allowed/,
    );
    await expect(helmTemplate("r", "ns", { "image.pullPolicy": "Sometimes" })).rejects.toThrow(
      /at '\/image\/pullPolicy': value must be one of/,
    );
    await expect(helmTemplate("r", "ns", { "service.baseUrl": "not a url" })).rejects.toThrow(
      /at '\/service\/baseUrl': 'not a url' does not match/,
    );
    await expect(helmTemplate("r", "ns", { "apiKeySecret.keyName": "x" })).rejects.toThrow(
      /additional properties 'keyName' not allowed/,
    );
  });

  it("refuses to render without the service's base URL, and takes it from config.service too", async () => {
    const required =
      /service\.baseUrl is required: the base URL of the Compute and Storage Service API/;
    // (helm lint only reports a missing required value as INFO; install and template fail.)
    await expect(
      runTool("helm", ["install", `no-url-${randomSuffix()}`, CHART_DIR, "-n", namespace]),
    ).rejects.toThrow(required);
    await expect(helmTemplate("r", "ns", { "service.baseUrl": "" })).rejects.toThrow(required);
    const objects = parseObjects(
      await helmTemplate("r", "ns", {
        "service.baseUrl": "",
        "config.service.baseUrl": "https://from-config.example.com",
      }),
    );
    expect(renderedConfig(objects)).toMatchObject({
      service: { baseUrl: "https://from-config.example.com" },
    });
  });

  it("refuses a config override the operator would refuse, by the schema generated from its own", async () => {
    await expect(helmTemplate("r", "ns", { "config.log.level": "verbose" })).rejects.toThrow(
      /at '\/config\/log\/level': value must be one of 'trace'/,
    );
    await expect(helmTemplate("r", "ns", { "config.pollIntervalSeconds": 15 })).rejects.toThrow(
      /at '\/config': additional properties 'pollIntervalSeconds' not allowed/,
    );
    await expect(
      helmTemplate("r", "ns", { "config.service.baseURL": "https://x" }),
    ).rejects.toThrow(/at '\/config\/service': additional properties 'baseURL' not allowed/);
    await expect(helmTemplate("r", "ns", { "config.concurrency.default": 0 })).rejects.toThrow(
      /at '\/config\/concurrency\/default': minimum/,
    );
    await expect(
      helmTemplate("r", "ns", { "config.service.endpoints.deleteNass": "/v1/nas/{id}" }),
    ).rejects.toThrow(/at '\/config\/service\/endpoints': additional properties 'deleteNass'/);
    await expect(
      helmTemplate("r", "ns", { "config.service.endpoints.deleteNas": "DELETE" }),
    ).rejects.toThrow(/at '\/config\/service\/endpoints\/deleteNas': 'anyOf' failed/);
    await expect(
      helmTemplate("r", "ns", { "config.trainingJob.exposure.allowedCidrs[0]": "gateway" }),
    ).rejects.toThrow(
      /at '\/config\/trainingJob\/exposure\/allowedCidrs\/0': 'gateway' does not match/,
    );
  });

  it("enables every delete operation with the values file of docs/install.md", async () => {
    const doc = readFileSync(join(root, "docs/install.md"), "utf8");
    const block = /```yaml\n(# delete-operations\.yaml[\s\S]*?)```/.exec(doc)?.[1];
    expect(block).toBeDefined();
    const dir = mkdtempSync(join(tmpdir(), "aidc-delete-ops-"));
    const file = join(dir, "delete-operations.yaml");
    writeFileSync(file, block ?? "");
    const objects = parseObjects(await helmTemplate("r", "ns", {}, ["--values", file]));
    rmSync(dir, { recursive: true, force: true });
    const config = operatorConfigSchema.parse(renderedConfig(objects));
    const table = resolveEndpointTable(config.service.endpoints);
    expect(resolveEndpointTable({}).deleteTrainingTask).toBeNull();
    for (const name of ["deleteTrainingTask", "deleteNas", "deleteTemplate"] as const) {
      expect(table[name], name).toMatchObject({ method: "DELETE" });
    }
  });

  it("refuses a V8 heap limit at or above the memory limit, in any unit", async () => {
    await expect(helmTemplate("r", "ns", { heapLimitMiB: 512 })).rejects.toThrow(
      /heapLimitMiB 512 must be below resources.limits.memory \(512Mi, 512 MiB\).*about three quarters of the limit \(384\)/,
    );
    await expect(
      helmTemplate("r", "ns", { heapLimitMiB: 2048, "resources.limits.memory": "2G" }),
    ).rejects.toThrow(/heapLimitMiB 2048 must be below resources.limits.memory \(2G, 1907 MiB\)/);
    await helmTemplate("r", "ns", { heapLimitMiB: 1536, "resources.limits.memory": "2Gi" });
  });

  it("fits the operator's whole stop in the pod's grace period, and refuses a stop budget longer than it", async () => {
    for (const [grace, stopMs] of [
      [30, 25_000],
      [60, 55_000],
      [6, 3_000],
    ] as const) {
      const objects = parseObjects(
        await helmTemplate("r", "ns", { terminationGracePeriodSeconds: grace }),
      );
      const [deployment] = ofKind(objects, "Deployment");
      const spec = deployment?.spec as { template: { spec: Record<string, unknown> } };
      expect(spec.template.spec.terminationGracePeriodSeconds).toBe(grace);
      expect(renderedConfig(objects)).toMatchObject({ shutdownTimeoutMs: stopMs });
    }
    const shorter = parseObjects(
      await helmTemplate("r", "ns", { "config.shutdownTimeoutMs": 10_000 }),
    );
    expect(renderedConfig(shorter)).toMatchObject({ shutdownTimeoutMs: 10_000 });
    await expect(helmTemplate("r", "ns", { "config.shutdownTimeoutMs": 40_000 })).rejects.toThrow(
      /config.shutdownTimeoutMs 40000 is longer than terminationGracePeriodSeconds \(30 s\)/,
    );
  });

  it("refuses a PodDisruptionBudget that would keep every operator pod", async () => {
    for (const minAvailable of [2, "100%"]) {
      await expect(
        helmTemplate("r", "ns", { "podDisruptionBudget.minAvailable": minAvailable }),
      ).rejects.toThrow(/podDisruptionBudget.minAvailable .* must be below replicas \(2\)/);
    }
    await helmTemplate("r", "ns", { replicas: 3, "podDisruptionBudget.minAvailable": 2 });
    await helmTemplate("r", "ns", { "podDisruptionBudget.minAvailable": "50%" });
  });

  it("selects the uninstall check's pod by the NetworkPolicy only, not by the metrics Service or the PodDisruptionBudget", async () => {
    const objects = parseObjects(await helmTemplate("r", "ns", { "networkPolicy.enabled": true }));
    function specOf<T>(kind: string): T {
      const [o] = ofKind(objects, kind);
      if (!o) throw new Error(`no ${kind} rendered`);
      return o.spec as T;
    }
    type Labels = Record<string, string>;
    const pod = specOf<{ template: { metadata: { labels: Labels } } }>("Job").template.metadata
      .labels;
    const matches = (selector: Labels) => Object.entries(selector).every(([k, v]) => pod[k] === v);
    expect(matches(specOf<{ selector: Labels }>("Service").selector)).toBe(false);
    const pdb = specOf<{ selector: { matchLabels: Labels } }>("PodDisruptionBudget");
    expect(matches(pdb.selector.matchLabels)).toBe(false);
    const { podSelector } = specOf<{
      podSelector: { matchLabels: Labels; matchExpressions: { key: string; values: string[] }[] };
    }>("NetworkPolicy");
    expect(matches(podSelector.matchLabels)).toBe(true);
    for (const e of podSelector.matchExpressions) expect(e.values).toContain(pod[e.key]);
  });

  it("refuses a name prefix that would make an object name longer than Kubernetes allows", async () => {
    const prefix55 = "a".repeat(55);
    const objects = parseObjects(await helmTemplate("r", "ns", { fullnameOverride: prefix55 }));
    expect(ofKind(objects, "Service")[0]?.metadata.name).toBe(`${prefix55}-metrics`);
    await expect(helmTemplate("r", "ns", { fullnameOverride: "a".repeat(56) })).rejects.toThrow(
      /the Service a{56}-metrics would have 64 characters and Kubernetes allows 63/,
    );
    // Helm's own limit on release names is 53: the chart name joins it.
    await expect(helmTemplate("r".repeat(50), "ns")).rejects.toThrow(
      /prefix "r{50}-aidc-operator" \(64 characters.*is too long/,
    );
  });

  it("refuses several replicas without leader election", async () => {
    await expect(helmTemplate("r", "ns", { "leaderElection.enabled": false })).rejects.toThrow(
      /replicas > 1 needs leaderElection.enabled=true/,
    );
    const single = parseObjects(
      await helmTemplate("r", "ns", { "leaderElection.enabled": false, replicas: 1 }),
    );
    // No Lease Role; the connections' Secret Role stays.
    expect(ofKind(single, "Role").map((r) => r.metadata.name)).toEqual([
      "r-aidc-operator-connection-secrets",
    ]);
    expect(ofKind(single, "PodDisruptionBudget")).toEqual([]);
  });

  it("refuses a plain http service or object storage URL without its allowInsecureHttp, as the operator does at start", async () => {
    await expect(
      helmTemplate("r", "ns", { "service.baseUrl": "http://aidc.local" }),
    ).rejects.toThrow(
      /service\.baseUrl http:\/\/aidc\.local is plain http.*set service\.allowInsecureHttp=true/,
    );
    await expect(
      helmTemplate("r", "ns", { "config.service.baseUrl": "http://aidc.local" }),
    ).rejects.toThrow(/service\.baseUrl http:\/\/aidc\.local is plain http/);
    await expect(
      helmTemplate("r", "ns", { "objectStorage.endpoint": "http://minio.local:9000" }),
    ).rejects.toThrow(/objectStorage\.endpoint http:\/\/minio\.local:9000 is plain http/);
    const allowed = parseObjects(
      await helmTemplate("r", "ns", {
        "service.baseUrl": "http://aidc.local",
        "service.allowInsecureHttp": true,
        "objectStorage.endpoint": "http://minio.local:9000",
        "objectStorage.allowInsecureHttp": true,
      }),
    );
    expect(renderedConfig(allowed)).toMatchObject({
      service: { baseUrl: "http://aidc.local", allowInsecureHttp: true },
      objectStorage: { endpoint: "http://minio.local:9000", allowInsecureHttp: true },
    });
  });

  it("takes apiKeySecret as a Secret name, with the key apiKey (as a ServiceConnection)", async () => {
    const objects = parseObjects(await helmTemplate("r", "ns", { apiKeySecret: "tenant-key" }));
    const [deployment] = ofKind(objects, "Deployment");
    const volumes = (deployment as unknown as DeploymentShape).spec.template.spec.volumes;
    expect(volumes.find((v) => v.name === "api-key")?.secret).toMatchObject({
      secretName: "tenant-key",
      items: [{ key: "apiKey", path: "api-key" }],
    });
    // The kubelet mounts it; the only rule on Secrets is the Role of the connections'
    // Secrets, in the release namespace (connections.secretNamespace), read only.
    const reading = [...ofKind(objects, "Role"), ...ofKind(objects, "ClusterRole")].filter((r) =>
      ((r.rules as { resources: string[] }[] | undefined) ?? []).some((x) =>
        x.resources.includes("secrets"),
      ),
    );
    expect(reading.map((r) => [r.kind, r.metadata.name, r.metadata.namespace])).toEqual([
      ["Role", "r-aidc-operator-connection-secrets", "ns"],
    ]);
    expect(reading[0]?.rules).toEqual([
      { apiGroups: [""], resources: ["secrets"], verbs: ["get", "list", "watch"] },
    ]);
  });

  it("creates a ServiceConnection from connections.create, its Secret in the connection Secrets' namespace, and refuses one without a name", async () => {
    expect(ofKind(parseObjects(await helmTemplate("r", "ns")), "ServiceConnection")).toEqual([]);
    const objects = parseObjects(
      await helmTemplate("r", "ns", {
        "connections.secretNamespace": "keys",
        "connections.create.name": "team-a",
        "connections.create.baseUrl": "https://team-a.example",
        "connections.create.apiKeySecret.name": "team-a-key",
        "connections.create.allowedNamespaces.names[0]": "team-a",
        "connections.create.limits.ratePerSecond": 5,
        "connections.create.limits.burst": 10,
      }),
    );
    const [conn] = ofKind(objects, "ServiceConnection");
    expect(conn?.spec).toEqual({
      baseUrl: "https://team-a.example",
      allowInsecureHttp: false,
      apiKeySecretRef: { namespace: "keys", name: "team-a-key", key: "apiKey" },
      allowedNamespaces: { names: ["team-a"] },
      limits: { ratePerSecond: 5, burst: 10 },
    });
    const secretsRole = ofKind(objects, "Role").find((r) =>
      r.metadata.name.endsWith("connection-secrets"),
    );
    expect(secretsRole?.metadata.namespace).toBe("keys");
    // Its fields without a name would create nothing: refused.
    await expect(
      helmTemplate("r", "ns", { "connections.create.baseUrl": "https://team-a.example" }),
    ).rejects.toThrow(/connections.create.name is required with the other fields/);
  });

  it("mounts the default connection's S3 credentials Secret and points the config at it", async () => {
    const none = parseObjects(await helmTemplate("r", "ns"));
    expect(renderedConfig(none)).not.toHaveProperty("objectStorage");
    const objects = parseObjects(
      await helmTemplate("r", "ns", {
        "objectStorage.endpoint": "https://s3.example.com",
        "objectStorage.region": "region-1",
        "objectStorage.credentialsSecret.name": "s3-keys",
        "objectStorage.credentialsSecret.accessKeyIdKey": "AWS_ACCESS_KEY_ID",
      }),
    );
    const config = operatorConfigSchema.parse(renderedConfig(objects));
    expect(config.objectStorage).toMatchObject({
      endpoint: "https://s3.example.com",
      region: "region-1",
      allowInsecureHttp: false,
      credentialsDir: "/var/run/secrets/aidc-s3",
    });
    const [deployment] = ofKind(objects, "Deployment");
    const pod = (deployment as unknown as DeploymentShape).spec.template.spec;
    expect(pod.volumes.find((v) => v.name === "s3-credentials")?.secret).toEqual({
      secretName: "s3-keys",
      items: [
        { key: "AWS_ACCESS_KEY_ID", path: "accessKeyId" },
        { key: "secretAccessKey", path: "secretAccessKey" },
      ],
      defaultMode: 288,
    });
    expect(pod.containers[0]?.volumeMounts).toContainEqual(
      expect.objectContaining({ mountPath: "/var/run/secrets/aidc-s3" }),
    );
    // The endpoint from `config` (as the base URL may be): the chart's values still apply.
    const fromConfig = parseObjects(
      await helmTemplate("r", "ns", {
        "config.objectStorage.endpoint": "https://s3.example.com",
        "objectStorage.region": "region-1",
        "objectStorage.credentialsSecret.name": "s3-keys",
      }),
    );
    expect(operatorConfigSchema.parse(renderedConfig(fromConfig)).objectStorage).toMatchObject({
      endpoint: "https://s3.example.com",
      region: "region-1",
      credentialsDir: "/var/run/secrets/aidc-s3",
    });
    // Temporary credentials: their session token is mounted beside the pair.
    const temporary = parseObjects(
      await helmTemplate("r", "ns", {
        "objectStorage.endpoint": "https://s3.example.com",
        "objectStorage.credentialsSecret.name": "s3-sts",
        "objectStorage.credentialsSecret.sessionTokenKey": "AWS_SESSION_TOKEN",
      }),
    );
    const [sts] = ofKind(temporary, "Deployment");
    const stsPod = (sts as unknown as DeploymentShape).spec.template.spec;
    expect(stsPod.volumes.find((v) => v.name === "s3-credentials")?.secret?.items).toEqual([
      { key: "accessKeyId", path: "accessKeyId" },
      { key: "secretAccessKey", path: "secretAccessKey" },
      { key: "AWS_SESSION_TOKEN", path: "sessionToken" },
    ]);
    // A key of no Secret would mount nothing.
    await expect(
      helmTemplate("r", "ns", {
        "objectStorage.credentialsSecret.sessionTokenKey": "AWS_SESSION_TOKEN",
      }),
    ).rejects.toThrow(
      /objectStorage.credentialsSecret.sessionTokenKey needs objectStorage.credentialsSecret.name/,
    );
  });

  it("projects a ServiceAccount token and sets the AWS SDKs' web identity variables for objectStorage.webIdentity", async () => {
    const objects = parseObjects(
      await helmTemplate("r", "ns", {
        "objectStorage.endpoint": "https://minio.example.com",
        "objectStorage.webIdentity.roleArn": "arn:aws:iam::1:role/aidc",
        "objectStorage.webIdentity.audience": "minio",
        "objectStorage.webIdentity.stsEndpoint": "https://minio.example.com",
      }),
    );
    expect(operatorConfigSchema.parse(renderedConfig(objects)).objectStorage).not.toHaveProperty(
      "credentialsDir",
    );
    const [deployment] = ofKind(objects, "Deployment");
    const pod = (deployment as unknown as DeploymentShape).spec.template.spec;
    expect(pod.volumes.find((v) => v.name === "web-identity-token")).toEqual({
      name: "web-identity-token",
      projected: {
        sources: [
          { serviceAccountToken: { audience: "minio", expirationSeconds: 3600, path: "token" } },
        ],
      },
    });
    const container = pod.containers[0];
    expect(container?.volumeMounts).toContainEqual(
      expect.objectContaining({ mountPath: "/var/run/secrets/aidc-web-identity" }),
    );
    expect(container?.env).toEqual(
      expect.arrayContaining([
        { name: "AWS_ROLE_ARN", value: "arn:aws:iam::1:role/aidc" },
        { name: "AWS_WEB_IDENTITY_TOKEN_FILE", value: "/var/run/secrets/aidc-web-identity/token" },
        { name: "AWS_ENDPOINT_URL_STS", value: "https://minio.example.com" },
        expect.objectContaining({ name: "AWS_ROLE_SESSION_NAME" }),
      ]),
    );
    const off = ofKind(parseObjects(await helmTemplate("r", "ns")), "Deployment")[0];
    const offPod = (off as unknown as DeploymentShape).spec.template.spec;
    expect(offPod.volumes.map((v) => v.name)).not.toContain("web-identity-token");
    expect(offPod.containers[0]?.env?.map((e) => e.name)).not.toContain("AWS_ROLE_ARN");
    expect(offPod.containers[0]?.env?.map((e) => e.name)).not.toContain(
      "AWS_WEB_IDENTITY_TOKEN_FILE",
    );
  });

  it("projects the token without a role of the operator's own for webIdentity.projectToken (ServiceConnections' roles)", async () => {
    const objects = parseObjects(
      await helmTemplate("r", "ns", { "objectStorage.webIdentity.projectToken": true }),
    );
    const pod = (ofKind(objects, "Deployment")[0] as unknown as DeploymentShape).spec.template.spec;
    expect(pod.volumes.map((v) => v.name)).toContain("web-identity-token");
    expect(pod.containers[0]?.volumeMounts).toContainEqual(
      expect.objectContaining({ mountPath: "/var/run/secrets/aidc-web-identity" }),
    );
    const env = pod.containers[0]?.env ?? [];
    expect(env).toContainEqual({
      name: "AWS_WEB_IDENTITY_TOKEN_FILE",
      value: "/var/run/secrets/aidc-web-identity/token",
    });
    expect(env.map((e) => e.name)).not.toContain("AWS_ROLE_ARN");
    // An STS URL is of the operator's own role: without one it would do nothing.
    await expect(
      helmTemplate("r", "ns", {
        "objectStorage.webIdentity.projectToken": true,
        "objectStorage.webIdentity.stsEndpoint": "https://minio.example.com",
      }),
    ).rejects.toThrow(
      /objectStorage.webIdentity.stsEndpoint needs objectStorage.webIdentity.roleArn: it is the STS of the operator's own role/,
    );
  });

  it("turns the credentials export on in the operator config with its Secret rule, and refuses the config override alone", async () => {
    const secretRules = (objects: RenderedObject[]) =>
      ofKind(objects, "ClusterRole")
        .flatMap((r) => (r as unknown as { rules?: { resources: string[] }[] }).rules ?? [])
        .filter((rule) => rule.resources.includes("secrets"));
    const off = parseObjects(await helmTemplate("r", "ns"));
    expect(secretRules(off)).toEqual([]);
    const on = parseObjects(
      await helmTemplate("r", "ns", { "objectStorage.exportCredentials": true }),
    );
    // Without an endpoint too: ServiceConnections may have object storage of their own.
    expect(operatorConfigSchema.parse(renderedConfig(on)).objectStorage.exportCredentials).toBe(
      true,
    );
    expect(secretRules(on)).toEqual([
      { apiGroups: [""], resources: ["secrets"], verbs: ["get", "create", "patch", "delete"] },
    ]);
    await expect(
      helmTemplate("r", "ns", { "config.objectStorage.exportCredentials": true }),
    ).rejects.toThrow(
      /config.objectStorage.exportCredentials: true differs .* set objectStorage.exportCredentials instead/,
    );
  });

  it("refuses a config override or extraEnv variable of a setting the chart writes from a value that also grants or wires it", async () => {
    const refused: Array<[Record<string, string | number | boolean>, RegExp]> = [
      [{ "config.server.port": 9090 }, /config.server.port: 9090 differs .* set metricsPort/],
      [
        { "config.leaderElection.enabled": false },
        /config.leaderElection.enabled: false differs .* set leaderElection.enabled/,
      ],
      [
        { "config.leaderElection.leaseNamespace": "other" },
        /config.leaderElection.leaseNamespace: "other" differs .* the release namespace/,
      ],
      [
        { "config.watchNamespaces[0]": "team-a" },
        /config.watchNamespaces: \["team-a"\] differs .* set watchNamespaces/,
      ],
      [{ "config.shardKey": "a" }, /config.shardKey: "a" differs .* set shards/],
      [
        { "config.connections.secretNamespace": "keys" },
        /config.connections.secretNamespace: "keys" differs .* set connections.secretNamespace/,
      ],
      [
        { "config.trainingJob.exposure.enabled": true },
        /config.trainingJob.exposure.enabled: true differs .* set exposure.enabled/,
      ],
    ];
    for (const [values, message] of refused) {
      await expect(helmTemplate("r", "ns", values)).rejects.toThrow(message);
    }
    // Their variables in extraEnv too: the environment wins over the config file.
    for (const path of [
      "server.port",
      "leaderElection.enabled",
      "leaderElection.leaseNamespace",
      "watchNamespaces",
      "shardKey",
      "trainingJob.exposure.enabled",
    ]) {
      const env = SETTINGS.find((s) => s.path === path)?.env;
      await expect(
        helmTemplate("r", "ns", { "extraEnv[0].name": `${env}`, "extraEnv[0].value": "x" }),
      ).rejects.toThrow(new RegExp(`extraEnv: ${env} sets ${path}, which the chart writes from`));
    }
    // An override equal to what the value writes, and one of a setting that needs nothing else.
    const objects = parseObjects(
      await helmTemplate("r", "ns", {
        metricsPort: 9090,
        "config.server.port": 9090,
        "watchNamespaces[0]": "team-a",
        "config.watchNamespaces[0]": "team-a",
        "config.trainingJob.exposure.allowedCidrs[0]": "10.0.0.0/8",
      }),
    );
    expect(renderedConfig(objects)).toMatchObject({
      server: { port: 9090 },
      watchNamespaces: ["team-a"],
      trainingJob: { exposure: { enabled: false, allowedCidrs: ["10.0.0.0/8"] } },
    });
  });

  it("leaves the connection Secrets' namespace to the pod's own unless set, so a namespace overlay moves it", async () => {
    expect(renderedConfig(parseObjects(await helmTemplate("r", "ns")))).not.toHaveProperty(
      "connections",
    );
    const set = parseObjects(await helmTemplate("r", "ns", { "connections.secretNamespace": "k" }));
    expect(renderedConfig(set)).toMatchObject({ connections: { secretNamespace: "k" } });
  });

  it("takes apiKeySecret as an object {name, key}", async () => {
    const objects = parseObjects(
      await helmTemplate("r", "ns", {
        "apiKeySecret.name": "vault-sync",
        "apiKeySecret.key": "token",
      }),
    );
    const [deployment] = ofKind(objects, "Deployment");
    const volumes = (deployment as unknown as DeploymentShape).spec.template.spec.volumes;
    expect(volumes.find((v) => v.name === "api-key")?.secret).toMatchObject({
      secretName: "vault-sync",
      items: [{ key: "token", path: "api-key" }],
    });
  });

  it("renders a hardened Deployment: non-root, read-only root, no capabilities, seccomp, probes", async () => {
    const [deployment] = ofKind(parseObjects(await helmTemplate("r", "ns")), "Deployment");
    const pod = (deployment as unknown as DeploymentShape).spec.template.spec;
    expect(pod.securityContext).toMatchObject({
      runAsNonRoot: true,
      runAsUser: 65532,
      seccompProfile: { type: "RuntimeDefault" },
    });
    const [container] = pod.containers;
    expect(container?.securityContext).toMatchObject({
      runAsNonRoot: true,
      readOnlyRootFilesystem: true,
      allowPrivilegeEscalation: false,
      capabilities: { drop: ["ALL"] },
      seccompProfile: { type: "RuntimeDefault" },
    });
    expect(container?.livenessProbe?.httpGet?.path).toBe("/healthz");
    expect(container?.readinessProbe?.httpGet?.path).toBe("/readyz");
    expect(container?.resources?.limits?.memory).toBeDefined();
    expect(container?.volumeMounts?.map((m) => m.mountPath).sort()).toEqual([
      "/etc/aidc-operator",
      "/tmp",
      "/var/run/secrets/aidc",
    ]);
    expect(pod.volumes.find((v) => v.name === "tmp")?.emptyDir).toBeDefined();
    expect((deployment as unknown as DeploymentShape).spec.replicas).toBe(2);
  });

  it("runs one Deployment per shard key beside the unsharded one, with selectors that never overlap", async () => {
    const unsharded = await helmTemplate("r", "ns");
    const sharded = parseObjects(await helmTemplate("r", "ns", {}, ["--set", "shards={a,b}"]));
    const deployments = ofKind(sharded, "Deployment") as unknown as ShardedDeployment[];
    expect(deployments.map((d) => d.metadata.name)).toEqual([
      "r-aidc-operator",
      "r-aidc-operator-shard-a",
      "r-aidc-operator-shard-b",
    ]);
    // The unsharded Deployment renders as it did without shards.
    expect(deployments[0]).toEqual(ofKind(parseObjects(unsharded), "Deployment")[0]);
    expect(deployments.map((d) => d.spec.template.spec.containers[0]?.args)).toEqual([
      ["run", "--config=/etc/aidc-operator/config.yaml"],
      ["run", "--config=/etc/aidc-operator/config.yaml", "--shard-key=a"],
      ["run", "--config=/etc/aidc-operator/config.yaml", "--shard-key=b"],
    ]);
    // No Deployment's selector matches another's pods.
    for (const d of deployments) {
      const pods = deployments.filter((other) =>
        Object.entries(d.spec.selector.matchLabels).every(
          ([k, v]) => other.spec.template.metadata.labels[k] === v,
        ),
      );
      expect(pods).toEqual([d]);
    }
    // Each Deployment keeps its own pods through voluntary disruptions.
    expect(ofKind(sharded, "PodDisruptionBudget").map((p) => p.metadata.name)).toEqual([
      "r-aidc-operator",
      "r-aidc-operator-shard-a",
      "r-aidc-operator-shard-b",
    ]);
    await expect(helmTemplate("r", "ns", {}, ["--set", "shards={Team_A}"])).rejects.toThrow(
      /shards\/0/,
    );
  });

  it("caps the V8 heap below the memory limit, and leaves it to Node with heapLimitMiB 0", async () => {
    const containerOf = async (values?: Record<string, number | string>) => {
      const [d] = ofKind(parseObjects(await helmTemplate("r", "ns", values)), "Deployment");
      return (d as unknown as DeploymentShape).spec.template.spec.containers[0];
    };
    const nodeOptions = (c: Awaited<ReturnType<typeof containerOf>>) =>
      c?.env?.find((e) => e.name === "NODE_OPTIONS")?.value;
    const byDefault = await containerOf();
    expect(nodeOptions(byDefault)).toBe("--max-old-space-size=384");
    expect(byDefault?.resources?.limits?.memory).toBe("512Mi");
    expect(
      nodeOptions(await containerOf({ heapLimitMiB: 1536, "resources.limits.memory": "2Gi" })),
    ).toBe("--max-old-space-size=1536");
    expect(nodeOptions(await containerOf({ heapLimitMiB: 0 }))).toBeUndefined();
  });

  interface PodShape {
    volumes: unknown[];
    containers: { volumeMounts: unknown[] }[];
  }

  it("adds extraEnv, extraVolumes and extraVolumeMounts to the operator pod (a proxy, its password from a Secret; a CA), and refuses an entry without a name", async () => {
    const dir = mkdtempSync(join(tmpdir(), "chart-extra-env-"));
    const file = join(dir, "values.yaml");
    const proxy = {
      name: "HTTPS_PROXY",
      valueFrom: { secretKeyRef: { name: "proxy", key: "url" } },
    };
    writeFileSync(
      file,
      JSON.stringify({ extraEnv: [proxy, { name: "NO_PROXY", value: ".cluster.local" }] }),
    );
    try {
      const [d] = ofKind(
        parseObjects(await helmTemplate("r", "ns", {}, ["--values", file])),
        "Deployment",
      );
      const env = (d as unknown as DeploymentShape).spec.template.spec.containers[0]?.env ?? [];
      expect(env.map((e) => e.name)).toEqual([
        "POD_NAME",
        "POD_NAMESPACE",
        "NODE_OPTIONS",
        "HTTPS_PROXY",
        "NO_PROXY",
      ]);
      expect(env[3]).toEqual(proxy);
      // A private CA for NODE_EXTRA_CA_CERTS, from a ConfigMap.
      const volume = { name: "corp-ca", configMap: { name: "corp-ca" } };
      const mount = { name: "corp-ca", mountPath: "/etc/corp-ca", readOnly: true };
      writeFileSync(file, JSON.stringify({ extraVolumes: [volume], extraVolumeMounts: [mount] }));
      const [withCa] = ofKind(
        parseObjects(await helmTemplate("r", "ns", {}, ["--values", file])),
        "Deployment",
      );
      const pod = (withCa as unknown as { spec: { template: { spec: PodShape } } }).spec.template
        .spec;
      expect(pod.volumes.at(-1)).toEqual(volume);
      expect(pod.containers[0]?.volumeMounts.at(-1)).toEqual(mount);
      writeFileSync(file, JSON.stringify({ extraEnv: [{ value: "http://proxy:3128" }] }));
      await expect(helmTemplate("r", "ns", {}, ["--values", file])).rejects.toThrow(
        /extraEnv\/0.*name/,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("refuses an extraEnv, extraVolumes or extraVolumeMounts entry the pod has already, naming it", async () => {
    // Helm 3 would keep both variables (the container sees the last); Helm 4's
    // server-side apply refuses the Deployment: "duplicate entries for key".
    await expect(
      helmTemplate("r", "ns", { "extraEnv[0].name": "NODE_OPTIONS", "extraEnv[0].value": "-r x" }),
    ).rejects.toThrow(
      /extraEnv: the name NODE_OPTIONS is in the operator pod twice .*set heapLimitMiB=0/,
    );
    const [d] = ofKind(
      parseObjects(
        await helmTemplate("r", "ns", {
          heapLimitMiB: 0,
          "extraEnv[0].name": "NODE_OPTIONS",
          "extraEnv[0].value": "--max-old-space-size=300 -r x",
        }),
      ),
      "Deployment",
    );
    const env = (d as unknown as DeploymentShape).spec.template.spec.containers[0]?.env ?? [];
    expect(env.filter((e) => e.name === "NODE_OPTIONS")).toEqual([
      { name: "NODE_OPTIONS", value: "--max-old-space-size=300 -r x" },
    ]);
    for (const [values, message] of [
      [{ "extraEnv[0].name": "POD_NAME", "extraEnv[0].value": "x" }, /extraEnv: the name POD_NAME/],
      [
        {
          "extraEnv[0].name": "A",
          "extraEnv[0].value": "1",
          "extraEnv[1].name": "A",
          "extraEnv[1].value": "2",
        },
        /extraEnv: the name A is in the operator pod twice/,
      ],
      [
        { "extraVolumes[0].name": "tmp", "extraVolumes[0].emptyDir.medium": "Memory" },
        /extraVolumes: the name tmp/,
      ],
      [
        { "extraVolumeMounts[0].name": "x", "extraVolumeMounts[0].mountPath": "/tmp" },
        /extraVolumeMounts: the mountPath \/tmp/,
      ],
    ] as const) {
      await expect(helmTemplate("r", "ns", values)).rejects.toThrow(message);
    }
  });

  it("writes the operator config from the values, overrides last", async () => {
    const objects = parseObjects(
      await helmTemplate("r", "ns", {
        "service.baseUrl": "https://aidc.example.com/api",
        "watchNamespaces[0]": "team-a",
        "config.pollIntervalMs.TrainingJob": 15000,
        "config.service.timeoutMs": 5000,
      }),
    );
    expect(renderedConfig(objects)).toMatchObject({
      service: {
        baseUrl: "https://aidc.example.com/api",
        apiKeyFile: "/var/run/secrets/aidc/api-key",
        allowInsecureHttp: false,
        timeoutMs: 5000,
      },
      watchNamespaces: ["team-a"],
      leaderElection: { enabled: true, leaseName: "r-aidc-operator-leader" },
      pollIntervalMs: { TrainingJob: 15000 },
    });
  });

  it("passes a server-side dry-run of everything it renders, with every option on", async () => {
    const watched = await createNamespace(kc, "watched");
    const variants: Record<string, string | number | boolean>[] = [
      {},
      {
        "networkPolicy.enabled": true,
        "networkPolicy.egress[0].ports[0].port": 443,
        "watchNamespaces[0]": watched,
        replicas: 1,
        "leaderElection.enabled": false,
        "exposure.enabled": true,
        "objectStorage.exportCredentials": true,
      },
    ];
    for (const values of variants) {
      const rendered = await helmTemplate(`dry-${randomSuffix()}`, namespace, values);
      const { stdout } = await runTool(
        "kubectl",
        ["apply", "--server-side", "--dry-run=server", "-f", "-"],
        rendered,
      );
      expect(stdout.trim().split("\n")).toHaveLength(parseObjects(rendered).length);
    }
  });

  it("renders a ServiceMonitor for the metrics port when asked", async () => {
    const objects = parseObjects(await helmTemplate("r", "ns", { "serviceMonitor.enabled": true }));
    const [monitor] = ofKind(objects, "ServiceMonitor");
    expect(monitor?.spec).toMatchObject({ endpoints: [{ port: "metrics", path: "/metrics" }] });
    const [service] = ofKind(objects, "Service");
    const ports = (service?.spec as { ports: { name: string }[] } | undefined)?.ports;
    expect(ports?.[0]?.name).toBe("metrics");
  });

  it("creates every object it renders on helm install", async () => {
    const release = `e2e-${randomSuffix()}`;
    releases.push(release);
    const { stdout: notes } = await runTool("helm", [
      "install",
      release,
      CHART_DIR,
      "--namespace",
      namespace,
      ...setArgs({ apiKeySecret: "aidc-api-key", ...BASE_URL }),
    ]);
    // The Secret does not exist: NOTES.txt says so, with the command that creates it.
    expect(notes).toContain("WARNING: that Secret does not exist yet");
    expect(notes).toContain(`kubectl -n ${namespace} create secret generic aidc-api-key`);
    const { stdout: manifest } = await runTool("helm", [
      "get",
      "manifest",
      release,
      "--namespace",
      namespace,
    ]);
    const expected = parseObjects(manifest);
    expect(new Set(expected.map((o) => o.kind))).toEqual(
      new Set([
        "ServiceAccount",
        "ConfigMap",
        "ClusterRole",
        "ClusterRoleBinding",
        "Role",
        "RoleBinding",
        "Service",
        "Deployment",
        "PodDisruptionBudget",
      ]),
    );
    const { stdout: live } = await runTool(
      "kubectl",
      [
        "get",
        "-f",
        "-",
        "-o",
        'jsonpath={range .items[*]}{.metadata.namespace}/{.kind}/{.metadata.name}{"\\n"}{end}',
      ],
      manifest,
    );
    expect(live.trim().split("\n").sort()).toEqual(objectRefs(expected));
    // The mode as the API server stored it: 0o440 (owner and group read), not 440 decimal.
    const deployment = expected.find((o) => o.kind === "Deployment")?.metadata.name ?? "";
    expect(await storedApiKeyMode(namespace, deployment)).toBe(0o440);
  });
});

/** The fields of a rendered Deployment the tests read. */
interface ShardedDeployment {
  metadata: { name: string };
  spec: {
    selector: { matchLabels: Record<string, string> };
    template: {
      metadata: { labels: Record<string, string> };
      spec: { containers: { args: string[] }[] };
    };
  };
}

interface DeploymentShape {
  spec: {
    replicas: number;
    template: {
      spec: {
        securityContext: Record<string, unknown>;
        volumes: {
          name: string;
          secret?: Record<string, unknown>;
          emptyDir?: unknown;
          projected?: unknown;
        }[];
        containers: {
          securityContext?: Record<string, unknown>;
          livenessProbe?: { httpGet?: { path: string } };
          readinessProbe?: { httpGet?: { path: string } };
          resources?: { limits?: Record<string, string> };
          env?: { name: string; value?: string }[];
          volumeMounts?: { mountPath: string }[];
        }[];
      };
    };
  };
}
