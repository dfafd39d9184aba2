import { readFile } from "node:fs/promises";
import { parse as parseYaml } from "yaml";
import type { z } from "zod";
import { yamlErrorLine } from "../runtime/kube-config-files.js";
import { type OperatorConfig, operatorConfigSchema } from "./schema.js";
import {
  API_KEY_ENV,
  CONFIG_FILE_ENV,
  misspeltEnvName,
  parseSettingValue,
  S3_KEY_ENV,
  SETTINGS,
} from "./settings.js";

/** A config that cannot be used; the message names the field and where it came from. */
export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ConfigError";
  }
}

/** Where to read the config from. */
export interface ConfigInput {
  /** `--config`: a YAML or JSON file; default `$AIDC_CONFIG`. */
  file?: string;
  /** The environment (default `process.env`). */
  env?: Record<string, string | undefined>;
  /** Flags by long name (`service-base-url`...), as strings or booleans. */
  flags?: Record<string, string | boolean | undefined>;
}

type Tree = Record<string, unknown>;

/**
 * Reads, merges (defaults < file < environment < flags) and validates the operator
 * config. Throws {@link ConfigError} with one message naming every bad field, e.g.
 * `invalid operator config: service.baseUrl: Invalid URL (from AIDC_SERVICE_BASE_URL)`.
 * Also checks that an API key is configured and that leader election has a namespace
 * (`POD_NAMESPACE` by default).
 */
export async function loadConfig(input: ConfigInput = {}): Promise<OperatorConfig> {
  const env = input.env ?? process.env;
  const merged: Tree = {};
  const origins = new Map<string, string>();
  const file = input.file ?? env[CONFIG_FILE_ENV];
  if (file) mergeInto(merged, await readConfigFile(file), `file ${file}`, origins);

  const problems: string[] = [];
  for (const name of Object.keys(env)) {
    const meant = misspeltEnvName(name);
    if (meant) problems.push(`${name}: no variable of the operator; did you mean ${meant}?`);
  }
  for (const s of SETTINGS) {
    const sources: Array<[string | boolean | undefined, string]> = [
      [env[s.env], s.env],
      [input.flags?.[s.flag], `--${s.flag}`],
    ];
    for (const [raw, origin] of sources) {
      if (raw === undefined || raw === "") continue;
      try {
        setPath(merged, s.path.split("."), parseSettingValue(s.type, raw));
        origins.set(s.path, origin);
      } catch (err) {
        problems.push(`${s.path}: ${(err as Error).message} (from ${origin})`);
      }
    }
  }
  if (problems.length > 0) throw invalid(problems);

  const result = operatorConfigSchema.safeParse(merged);
  if (!result.success) throw invalid(result.error.issues.map((i) => describeIssue(i, origins)));
  const config = result.data;

  if (!config.service.apiKeyFile && !env[API_KEY_ENV]) {
    throw invalid([
      `service.apiKeyFile: no API key configured: set service.apiKeyFile (the mounted Secret) or ${API_KEY_ENV}`,
    ]);
  }
  const s3Pair = [S3_KEY_ENV.accessKeyId, S3_KEY_ENV.secretAccessKey];
  const s3Set = [...s3Pair, S3_KEY_ENV.sessionToken].filter((name) => env[name]?.trim());
  const s3Missing = s3Pair.filter((name) => !s3Set.includes(name));
  if (s3Set.length > 0 && s3Missing.length > 0) {
    // Half a pair is no key pair: the credentials would silently come from elsewhere.
    throw invalid([
      `objectStorage: ${s3Set.join(" and ")} set without ${s3Missing.join(" and ")}: the S3 key pair from the environment needs both (and the session token only beside them)`,
    ]);
  }
  if (config.leaderElection.enabled && !config.leaderElection.leaseNamespace) {
    if (!env.POD_NAMESPACE) {
      throw invalid([
        "leaderElection.leaseNamespace: required when leaderElection.enabled is true (or set POD_NAMESPACE)",
      ]);
    }
    config.leaderElection.leaseNamespace = env.POD_NAMESPACE;
  }
  if (!config.connections.secretNamespace && env.POD_NAMESPACE) {
    config.connections.secretNamespace = env.POD_NAMESPACE;
  }
  return config;
}

async function readConfigFile(path: string): Promise<Tree> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (err) {
    throw new ConfigError(`cannot read the config file ${path}: ${(err as Error).message}`);
  }
  let parsed: unknown;
  try {
    // YAML is a superset of JSON: one parser for both.
    parsed = parseYaml(text);
  } catch (err) {
    throw new ConfigError(
      `the config file ${path} is not valid YAML or JSON: ${yamlErrorLine(err)}`,
    );
  }
  if (parsed === null || parsed === undefined) return {};
  if (typeof parsed !== "object" || Array.isArray(parsed)) {
    throw new ConfigError(`the config file ${path} must hold an object (a YAML mapping)`);
  }
  return parsed as Tree;
}

function invalid(lines: string[]): ConfigError {
  return new ConfigError(`invalid operator config: ${lines.join("; ")}`);
}

function describeIssue(issue: z.core.$ZodIssue, origins: Map<string, string>): string {
  const path = issue.path.map(String);
  if (issue.code === "unrecognized_keys") {
    return issue.keys
      .map((k) => `${[...path, k].join(".")}: unknown field${originOf([...path, k], origins)}`)
      .join("; ");
  }
  const name = path.length > 0 ? path.join(".") : "(config)";
  return `${name}: ${issue.message}${originOf(path, origins)}`;
}

/** ` (from X)` for the most specific source that set `path` or a parent of it. */
function originOf(path: string[], origins: Map<string, string>): string {
  for (let n = path.length; n > 0; n--) {
    const origin = origins.get(path.slice(0, n).join("."));
    if (origin) return ` (from ${origin})`;
  }
  return "";
}

/** Deep merge: objects merge, anything else (arrays included) replaces; records origins of leaves. */
function mergeInto(
  target: Tree,
  source: Tree,
  origin: string,
  origins: Map<string, string>,
  prefix: string[] = [],
): void {
  for (const [key, value] of Object.entries(source)) {
    const path = [...prefix, key];
    const current = target[key];
    if (isTree(value) && isTree(current)) {
      mergeInto(current, value, origin, origins, path);
    } else {
      target[key] = isTree(value) ? structuredClone(value) : value;
      origins.set(path.join("."), origin);
    }
  }
}

function setPath(target: Tree, path: string[], value: unknown): void {
  let node = target;
  for (const key of path.slice(0, -1)) {
    if (!isTree(node[key])) node[key] = {};
    node = node[key] as Tree;
  }
  node[path[path.length - 1] as string] = value;
}

function isTree(v: unknown): v is Tree {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
