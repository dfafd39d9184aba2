import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { apiKeyReader, checkApiKey } from "./api-key.js";
import { ConfigError, loadConfig } from "./load.js";
import { concurrencyFor, pollIntervalFor } from "./schema.js";

let dir = "";
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "aidc-config-"));
});

async function file(name: string, text: string): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, text);
  return path;
}

const BASE_URL = "https://api.example.com";
/** The least an environment must give: the API key and the service's base URL. */
const withKey = { AIDC_API_KEY: "secret-key", AIDC_SERVICE_BASE_URL: BASE_URL };
const keyOnly = { AIDC_API_KEY: "secret-key" };
/** The base URL and no key: the API key tests give theirs as a file. */
const urlOnly = { AIDC_SERVICE_BASE_URL: BASE_URL };

describe("loadConfig", () => {
  it("fills every default when only an API key and the base URL are given", async () => {
    const config = await loadConfig({ env: withKey });
    expect(config.service.baseUrl).toBe(BASE_URL);
    expect(config.watchNamespaces).toEqual([]);
    expect(config.leaderElection.enabled).toBe(false);
    expect(config.server.port).toBe(8080);
    expect(pollIntervalFor(config, "TrainingJob")).toBe(30_000);
    expect(concurrencyFor(config, "nasvolume")).toBe(16);
  });

  it("accepts an https base URL without allowInsecureHttp", async () => {
    const config = await loadConfig({
      env: { ...keyOnly, AIDC_SERVICE_BASE_URL: "https://api.example.com" },
    });
    expect(config.service).toMatchObject({
      baseUrl: "https://api.example.com",
      allowInsecureHttp: false,
      maxResponseBytes: 4 * 1024 * 1024,
    });
  });

  it("accepts a plain http base URL when allowInsecureHttp is set (the playground)", async () => {
    const config = await loadConfig({
      env: { ...keyOnly, AIDC_SERVICE_BASE_URL: "http://emulator:8787" },
      flags: { "service-allow-insecure-http": true },
    });
    expect(config.service.allowInsecureHttp).toBe(true);
  });

  it("reads the file the chart writes (YAML) and lets the environment and flags win, in that order", async () => {
    const path = await file(
      "chart.yaml",
      [
        "service:",
        "  apiKeyFile: /var/run/secrets/aidc/api-key",
        "  baseUrl: https://api.example.com",
        "  endpoints:",
        "    deleteNas: null",
        "server:",
        "  port: 9090",
        "leaderElection:",
        "  enabled: true",
        "  leaseName: aidc-operator-leader",
        "watchNamespaces: [team-a, team-b]",
        "pollIntervalMs:",
        "  TrainingJob: 10000",
        "concurrency:",
        "  default: 4",
      ].join("\n"),
    );
    const config = await loadConfig({
      file: path,
      env: { POD_NAMESPACE: "aidc-system", AIDC_METRICS_PORT: "9191", AIDC_LOG_LEVEL: "debug" },
      flags: { "log-level": "warn" },
    });
    expect(config.service.apiKeyFile).toBe("/var/run/secrets/aidc/api-key");
    expect(config.service.endpoints).toEqual({ deleteNas: null });
    expect(config.server.port).toBe(9191);
    expect(config.log.level).toBe("warn");
    expect(config.leaderElection.leaseNamespace).toBe("aidc-system");
    expect(config.watchNamespaces).toEqual(["team-a", "team-b"]);
    expect(pollIntervalFor(config, "TrainingJob")).toBe(10_000);
    expect(pollIntervalFor(config, "NasVolume")).toBe(30_000);
    expect(concurrencyFor(config, "any")).toBe(4);
  });

  it("reads a JSON file and the config path from AIDC_CONFIG", async () => {
    const path = await file("c.json", JSON.stringify({ service: { timeoutMs: 2500 } }));
    const config = await loadConfig({ env: { ...withKey, AIDC_CONFIG: path } });
    expect(config.service.timeoutMs).toBe(2500);
  });

  it("lets other AIDC_ variables be (the development tools'), far from any of its own", async () => {
    const config = await loadConfig({
      env: { ...withKey, AIDC_EMULATOR_URL: "http://127.0.0.1:1", AIDC_CHAOS_SEED: "7" },
    });
    expect(config.service.baseUrl).toBe(BASE_URL);
  });

  it("parses list, number and boolean settings from the environment", async () => {
    const config = await loadConfig({
      env: {
        ...withKey,
        AIDC_WATCH_NAMESPACES: "a, b,,c",
        AIDC_CONCURRENCY: "3",
        AIDC_LEADER_ELECTION: "true",
        AIDC_LEASE_NAMESPACE: "ops",
      },
    });
    expect(config.watchNamespaces).toEqual(["a", "b", "c"]);
    expect(config.concurrency.default).toBe(3);
    expect(config.leaderElection).toMatchObject({ enabled: true, leaseNamespace: "ops" });
  });

  const failures: Array<{
    reason: string;
    input: Parameters<typeof loadConfig>[0];
    message: RegExp;
  }> = [
    {
      reason: "a bad URL names the field and the environment variable it came from",
      input: { env: { ...withKey, AIDC_SERVICE_BASE_URL: "not a url" } },
      message: /^invalid operator config: service\.baseUrl: .*\(from AIDC_SERVICE_BASE_URL\)$/,
    },
    {
      reason: "a plain http base URL without allowInsecureHttp is refused, naming the setting",
      input: { env: { ...keyOnly, AIDC_SERVICE_BASE_URL: "http://api.example.com" } },
      message:
        /^invalid operator config: service\.baseUrl: http:\/\/api\.example\.com\/? is plain http.*service\.allowInsecureHttp: true.*\(from AIDC_SERVICE_BASE_URL\)$/,
    },
    {
      reason: "no base URL is refused, naming the chart value and the variable to set",
      input: { env: keyOnly },
      message:
        /^invalid operator config: service\.baseUrl: required: the base URL of the Compute and Storage Service API \(the chart's value service\.baseUrl, or AIDC_SERVICE_BASE_URL\)$/,
    },
    {
      reason: "no base URL in a file without a service section is refused by name",
      input: { env: keyOnly, file: "FILE:log:\n  level: info\n" },
      message: /^invalid operator config: service\.baseUrl: required/,
    },
    {
      reason: "a misspelt field in the file is named as unknown, with the file",
      input: { env: withKey, file: "FILE:service:\n  baseURL: https://x.example\n" },
      message: /service\.baseURL: unknown field \(from file .*\)/,
    },
    {
      reason: "a negative poll interval names the kind",
      input: { env: withKey, file: "FILE:pollIntervalMs:\n  NasVolume: -5\n" },
      message: /pollIntervalMs\.NasVolume: Too small/,
    },
    {
      reason: "a non-number port from a flag names the flag",
      input: { env: withKey, flags: { "metrics-port": "eighty" } },
      message: /server\.port: expected a number, got "eighty" \(from --metrics-port\)/,
    },
    {
      reason: "a bad boolean names the variable",
      input: { env: { ...withKey, AIDC_LEADER_ELECTION: "yes please" } },
      message: /leaderElection\.enabled: expected true or false.*\(from AIDC_LEADER_ELECTION\)/,
    },
    {
      reason: "lease durations out of order are refused",
      input: { env: withKey, file: "FILE:leaderElection:\n  leaseDurationMs: 5000\n" },
      message:
        /leaderElection\.leaseDurationMs: must be greater than leaderElection\.renewDeadlineMs/,
    },
    {
      reason: "a retry or backoff whose longest delay is below its first is refused, named",
      input: {
        env: withKey,
        file: "FILE:backoff:\n  baseMs: 1000\n  maxMs: 10\nservice:\n  retry:\n    baseDelayMs: 500\n    maxDelayMs: 5\nholdBackoff:\n  baseMs: 900\n  maxMs: 9\n",
      },
      message:
        /service\.retry\.maxDelayMs: must be at least service\.retry\.baseDelayMs .*backoff\.maxMs: must be at least backoff\.baseMs .*holdBackoff\.maxMs: must be at least holdBackoff\.baseMs/,
    },
    {
      reason: "an endpoint override of an unknown name is refused, named",
      input: { env: withKey, file: "FILE:service:\n  endpoints:\n    deleteNass: /v1/x\n" },
      message: /service\.endpoints\.deleteNass: unknown field/,
    },
    {
      reason: "an endpoint override of another form than [METHOD ]/path is refused, named",
      input: { env: withKey, file: "FILE:service:\n  endpoints:\n    deleteNas: DELETE\n" },
      message: /service\.endpoints\.deleteNas: expected "\/path" or "METHOD \/path"/,
    },
    {
      reason: "no API key at all is refused",
      input: { env: urlOnly },
      message: /service\.apiKeyFile: no API key configured/,
    },
    {
      reason: "leader election without a namespace is refused",
      input: { env: { ...withKey, AIDC_LEADER_ELECTION: "true" } },
      message: /leaderElection\.leaseNamespace: required/,
    },
    {
      reason: "a namespace that is no namespace name (it would match none) names the variable",
      input: { env: { ...withKey, AIDC_WATCH_NAMESPACES: "team-a,Team_B" } },
      message:
        /watchNamespaces\.1: a namespace name: a lower-case DNS label.*\(from AIDC_WATCH_NAMESPACES\)/,
    },
    {
      reason: "an adoption namespace that is neither a namespace name nor * is refused",
      input: { env: withKey, flags: { "adoption-namespaces": "team.a" } },
      message: /adoption\.namespaces\.0: a namespace name.*\(from --adoption-namespaces\)/,
    },
    {
      reason: "a Secret or Lease namespace that is no namespace name is refused",
      input: { env: withKey, file: "FILE:connections:\n  secretNamespace: Ops\n" },
      message: /connections\.secretNamespace: a namespace name/,
    },
    {
      reason: "a base URL carrying a user or password is refused, without repeating it",
      input: { env: { ...keyOnly, AIDC_SERVICE_BASE_URL: "http://ops:pa55w0rd@api.example.com" } },
      message: /^(?!.*pa55w0rd).*service\.baseUrl: must not carry a user or password/s,
    },
    {
      reason: "an S3 endpoint carrying a key pair is refused, without repeating it",
      input: {
        env: { ...withKey, AIDC_OBJECT_STORAGE_ENDPOINT: "https://AKID:s3s3cr3t@s3.example.com" },
      },
      message: /^(?!.*s3s3cr3t).*objectStorage\.endpoint: must not carry a user or password/s,
    },
    {
      reason: "half an S3 key pair in the environment is refused, naming what is missing",
      input: { env: { ...withKey, AIDC_S3_ACCESS_KEY_ID: "AKID", AIDC_S3_SESSION_TOKEN: "t" } },
      message:
        /^(?!.*AKID)invalid operator config: objectStorage: AIDC_S3_ACCESS_KEY_ID and AIDC_S3_SESSION_TOKEN set without AIDC_S3_SECRET_ACCESS_KEY/,
    },
    {
      reason: "a misspelt variable of the operator is named with the one meant",
      input: { env: { ...withKey, AIDC_WATCH_NAMESPACE: "team-a", AIDC_LOGLEVEL: "debug" } },
      message:
        /AIDC_WATCH_NAMESPACE: no variable of the operator; did you mean AIDC_WATCH_NAMESPACES\?; AIDC_LOGLEVEL: .*AIDC_LOG_LEVEL\?/,
    },
    {
      reason: "an unreadable config file is named",
      input: { env: withKey, file: "/nonexistent/aidc.yaml" },
      message: /cannot read the config file \/nonexistent\/aidc\.yaml/,
    },
    {
      reason: "a config file that is not YAML is named, on one line (no excerpt below it)",
      input: { env: withKey, file: "FILE:service: [a\n" },
      message: /^the config file \S+bad\.yaml is not valid YAML or JSON: .* at line 2, column 1$/,
    },
    {
      reason: "a config file that is not a mapping is refused",
      input: { env: withKey, file: "FILE:- a\n- b\n" },
      message: /must hold an object/,
    },
  ];

  for (const { reason, input, message } of failures) {
    it(`stops with one clear message: ${reason}`, async () => {
      const actual = { ...input };
      if (input?.file?.startsWith("FILE:"))
        actual.file = await file("bad.yaml", input.file.slice(5));
      const err = await loadConfig(actual).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ConfigError);
      expect((err as Error).message).toMatch(message);
      expect((err as Error).message).not.toContain("secret-key");
    });
  }
});

describe("the API key", () => {
  it("comes from AIDC_API_KEY when set, else from the file, re-read after the refresh period", async () => {
    const config = await loadConfig({ env: withKey });
    expect(await apiKeyReader(config, { env: withKey })()).toBe("secret-key");

    const keyFile = await file("api-key", "first\n");
    const fromFile = await loadConfig({
      env: { ...urlOnly, AIDC_API_KEY_FILE: keyFile },
    });
    const read = apiKeyReader(fromFile, { env: {}, refreshMs: 0 });
    expect(await read()).toBe("first");
    await writeFile(keyFile, "rotated");
    expect(await read()).toBe("rotated");
  });

  it("reports every change a read finds, to requests and the watcher alike, never the first read", async () => {
    const keyFile = await file("api-key-change", "right");
    const config = await loadConfig({
      env: { ...urlOnly, AIDC_API_KEY_FILE: keyFile },
    });
    expect(config.service.apiKeyRefreshMs).toBe(10_000);
    let changes = 0;
    const read = apiKeyReader(config, { env: {}, refreshMs: 60_000, onChange: () => changes++ });
    expect(await read()).toBe("right");
    await writeFile(keyFile, "wrong");
    expect(await read()).toBe("right");
    await read.refresh();
    expect(await read()).toBe("wrong");
    expect(changes).toBe(1);
    await writeFile(keyFile, "right");
    await read.refresh();
    await read.refresh();
    expect(changes).toBe(2);
  });

  it("is checked at start with an error naming service.apiKeyFile", async () => {
    const config = await loadConfig({
      env: { ...urlOnly, AIDC_API_KEY_FILE: join(dir, "missing") },
    });
    const err = await checkApiKey(apiKeyReader(config, { env: {} }), config).catch(
      (e: unknown) => e,
    );
    expect((err as Error).message).toMatch(/^service\.apiKeyFile: cannot read .*missing/);
    const empty = await file("empty-key", "\n");
    const config2 = await loadConfig({
      env: { ...urlOnly, AIDC_API_KEY_FILE: empty },
    });
    await expect(checkApiKey(apiKeyReader(config2, { env: {} }), config2)).rejects.toThrow(
      /is empty/,
    );
  });
});
