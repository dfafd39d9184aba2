/**
 * Writes docs/configuration.md, the reference of the operator config, from its zod
 * schema (src/config/schema.ts: each field's `.describe()` text and default) and the
 * table of settings that environment variables and flags reach (src/config/settings.ts).
 * A field that neither it nor an enclosing object describes fails the generator, as does
 * a setting whose path is not a field: a new setting cannot be left out of the docs.
 * `--check` fails when the page is stale.
 *
 *   tsx scripts/generate-config-docs.ts [--check]
 */
import { z } from "zod";
import { operatorConfigSchema } from "../src/config/schema.js";
import { API_KEY_ENV, CONFIG_FILE_ENV, S3_KEY_ENV, SETTINGS } from "../src/config/settings.js";
import { KUBECONFIG_SEARCH } from "../src/runtime/kube-config.js";
import { WEB_IDENTITY_ENV } from "../src/service/object-storage-web-identity.js";
import { checkMode, reportGenerated, syncGeneratedFiles } from "./generated-files.js";

/** The generated page. */
export const CONFIG_DOC = "docs/configuration.md";

interface SchemaNode {
  description?: string;
  default?: unknown;
  type?: string | string[];
  enum?: unknown[];
  properties?: Record<string, SchemaNode>;
  required?: string[];
  anyOf?: SchemaNode[];
}

/** One row of the reference: a field, or an object whose fields it describes together. */
export interface ConfigRow {
  /** Dotted path; `a.{x,y}` for an object described as a whole. */
  path: string;
  /** The dotted paths the row covers (the fields of an object described as a whole). */
  covers: string[];
  defaultText: string;
  description: string;
}

/** The object branch of a node (a nullable object is an anyOf of it and null). */
function objectOf(node: SchemaNode): SchemaNode | undefined {
  if (node.properties) return node;
  return node.anyOf?.find((n) => n.properties);
}

function describesChildren(node: SchemaNode): boolean {
  const obj = objectOf(node);
  return Object.values(obj?.properties ?? {}).some(
    (c) => c.description !== undefined || describesChildren(c),
  );
}

function defaultText(node: SchemaNode, required: boolean): string {
  if (required) return "— (required)";
  if (node.default === undefined) return "—";
  return `\`${JSON.stringify(node.default)}\``;
}

/** The rows of the config schema, in its order; throws naming an undescribed field. */
export function configRows(): ConfigRow[] {
  const root = z.toJSONSchema(operatorConfigSchema, { io: "input" }) as SchemaNode;
  const rows: ConfigRow[] = [];
  const undescribed: string[] = [];
  const walk = (node: SchemaNode, path: string, required: boolean) => {
    const obj = objectOf(node);
    if (obj && describesChildren(node)) {
      for (const [name, child] of Object.entries(obj.properties ?? {})) {
        walk(child, path ? `${path}.${name}` : name, obj.required?.includes(name) ?? false);
      }
      return;
    }
    if (node.description === undefined) {
      undescribed.push(path);
      return;
    }
    if (obj && Object.keys(obj.properties ?? {}).length > 0) {
      const fields = Object.entries(obj.properties ?? {});
      const defaults = fields.map(([, f]) =>
        f.default === undefined ? "—" : JSON.stringify(f.default),
      );
      rows.push({
        path: `${path}.{${fields.map(([n]) => n).join(",")}}`,
        covers: fields.map(([n]) => `${path}.${n}`),
        defaultText: `\`${defaults.join(", ")}\`${node.anyOf ? " or `null`" : ""}`,
        description: node.description,
      });
      return;
    }
    rows.push({
      path,
      covers: [path],
      defaultText: defaultText(node, required),
      description: node.description,
    });
  };
  walk(root, "", false);
  if (undescribed.length > 0) {
    throw new Error(
      `config fields without a description (add .describe() in src/config): ${undescribed.join(", ")}`,
    );
  }
  return rows;
}

/** The environment variable and flag that set a row's field, if any. */
function settingsOf(row: ConfigRow): string {
  const whole = row.covers.length === 1;
  return SETTINGS.filter((s) => row.covers.some((c) => s.path === c || s.path.startsWith(`${c}.`)))
    .map((s) => {
      const which = whole && row.covers[0] === s.path ? "" : ` (\`${s.path}\`)`;
      return `\`${s.env}\`, \`--${s.flag}\`${which}`;
    })
    .join("; ");
}

const cell = (text: string) => text.replaceAll("|", "\\|").replaceAll("\n", " ");

/** The page. */
export function renderConfigDocs(): string {
  const rows = configRows();
  const covered = new Set(rows.flatMap((r) => r.covers));
  const stray = SETTINGS.filter(
    (s) => ![...covered].some((c) => s.path === c || s.path.startsWith(`${c}.`)),
  );
  if (stray.length > 0) {
    throw new Error(
      `settings whose path is no config field: ${stray.map((s) => s.path).join(", ")}`,
    );
  }
  const fieldRows = rows.map(
    (r) =>
      `| \`${r.path}\` | ${r.defaultText} | ${settingsOf(r) || "—"} | ${cell(r.description)} |`,
  );
  const envRows = [
    `| \`${CONFIG_FILE_ENV}\` | \`--config\` | the config file (YAML or JSON) |`,
    `| \`${API_KEY_ENV}\` | — | the API key itself (wins over \`service.apiKeyFile\`); environment only |`,
    `| \`${S3_KEY_ENV.accessKeyId}\`, \`${S3_KEY_ENV.secretAccessKey}\`, \`${S3_KEY_ENV.sessionToken}\` | — | the default connection's S3 key pair, and the session token of temporary ones (win over \`objectStorage.credentialsDir\`; half a pair stops the start); environment only |`,
    `| \`${WEB_IDENTITY_ENV.roleArn}\`, \`${WEB_IDENTITY_ENV.tokenFile}\`, \`${WEB_IDENTITY_ENV.sessionName}\`, \`${WEB_IDENTITY_ENV.stsEndpoint}\` | — | the default connection's S3 credentials from web identity, as the AWS SDKs read them (after the key pair and \`objectStorage.credentialsDir\`); environment only |`,
    ...SETTINGS.map(
      (s) =>
        `| \`${s.env}\`${s.type === "boolean" ? " (true/false)" : s.type === "list" ? " (comma list)" : ""} | \`--${s.flag}\`${s.type === "boolean" ? ` / \`--no-${s.flag}\`` : ""} | \`${s.path}\` |`,
    ),
    "| `POD_NAMESPACE`, `POD_NAME` | — | the default of `leaderElection.leaseNamespace` and `connections.secretNamespace`; the leader identity (the chart sets both) |",
    `| — | \`--kubeconfig\` | the kubeconfig (default: ${KUBECONFIG_SEARCH}; \`$KUBECONFIG\` may list several files) |`,
    "| — | `--context` | a context of the kubeconfig other than its current one |",
  ];
  return `${[
    "<!-- Generated by scripts/generate-config-docs.ts from src/config (npm run generate). Do not edit by hand. -->",
    "# Operator configuration",
    "",
    "`aidc-operator run` reads one config. Sources, later ones winning: the defaults below <",
    `the file (\`--config\` or \`$${CONFIG_FILE_ENV}\`, YAML or JSON; the chart writes it from its values`,
    "and merges the value `config` over it) < environment variables < flags. Every object is",
    "strict: a misspelt field stops the start with a message naming it and where its value",
    "came from, as does an `AIDC_` variable two letters off one of its own (Environment",
    "variables and flags, below), e.g.",
    "",
    "```",
    "aidc-operator: invalid operator config: service.baseURL: unknown field (from file /etc/aidc-operator/config.yaml)",
    "aidc-operator: invalid operator config: service.baseUrl: Invalid URL (from AIDC_SERVICE_BASE_URL)",
    "aidc-operator: invalid operator config: AIDC_WATCH_NAMESPACE: no variable of the operator; did you mean AIDC_WATCH_NAMESPACES?",
    "```",
    "",
    "With the chart, set a field under the value `config` (`values.schema.json` refuses an",
    "unknown key or a bad value at install); a field the chart writes from a value of its own",
    "that also grants or wires it (`server.port` from `metricsPort`, `watchNamespaces`,",
    "`leaderElection.enabled`...: docs/chart-values.md, `config`) is set by that value",
    "instead. Durations are in milliseconds.",
    "",
    "## Fields",
    "",
    "| field | default | environment, flag | meaning |",
    "|---|---|---|---|",
    ...fieldRows,
    "",
    "## Environment variables and flags",
    "",
    "| environment | flag | sets |",
    "|---|---|---|",
    ...envRows,
  ].join("\n")}\n`;
}

if (import.meta.main) {
  const check = checkMode();
  const problems = syncGeneratedFiles(new Map([[CONFIG_DOC, renderConfigDocs()]]), [], check);
  reportGenerated("generate-config-docs", problems, check);
}
