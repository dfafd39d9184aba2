/**
 * The endpoint table: every operation of the service by name, with its method, path
 * and whether it may be retried, gathered from the rows each kind declares in
 * src/service/kinds/<kind>.ts. The spec documents most paths; operations it only
 * refers to (subscription results, lists, pod open-port) and those it does not name at
 * all (deletes, NAS list and detail) get assumed paths there
 * (docs/service-assumptions.md), which the operator configuration can override or
 * disable by name. Deletes of tasks, NAS and templates are off until a path is
 * configured.
 */
import type {
  EndpointDeclarations,
  EndpointDefinition,
  HttpMethod,
} from "./endpoint-definition.js";
import { KIND_ENDPOINT_TABLES, KIND_ENDPOINTS } from "./kinds/index.js";

export {
  assumed,
  documented,
  type EndpointDeclarations,
  type EndpointDefinition,
  type HttpMethod,
} from "./endpoint-definition.js";

/**
 * Throws when a kind declares an operation name that another kind already has (a later
 * spread would silently replace the earlier row).
 */
export function checkEndpointNames(kinds: Readonly<Record<string, EndpointDeclarations>>): void {
  const owner = new Map<string, string>();
  for (const [kind, table] of Object.entries(kinds)) {
    for (const name of Object.keys(table)) {
      const other = owner.get(name);
      if (other !== undefined) {
        throw new Error(
          `service endpoint "${name}" of src/service/kinds/${kind}.ts is also declared by ${other}`,
        );
      }
      owner.set(name, `src/service/kinds/${kind}.ts`);
    }
  }
}

checkEndpointNames(KIND_ENDPOINT_TABLES);

/**
 * The default endpoint table: the operations each kind declares in its own module of
 * src/service/kinds (gathered by the generated src/service/kinds/index.ts). Keys are
 * the endpoint names used in configuration; the emulator routes the same table.
 */
export const DEFAULT_ENDPOINTS = KIND_ENDPOINTS satisfies Record<string, EndpointDefinition>;

/** Name of an operation in the endpoint table. */
export type EndpointName = keyof typeof DEFAULT_ENDPOINTS;

/** Every endpoint name, in table order. */
export const ENDPOINT_NAMES = Object.keys(DEFAULT_ENDPOINTS) as EndpointName[];

/**
 * Overrides by endpoint name: a path (`/v2/x/{id}`) or a method and a path
 * (`DELETE /v2/x/{id}`) replaces the default and enables the endpoint; `null` disables it.
 */
export type EndpointOverrides = Partial<Record<string, string | null>>;

/** The effective table: a definition per enabled endpoint, `null` per disabled one. */
export type EndpointTable = Record<EndpointName, EndpointDefinition | null>;

const METHODS: readonly string[] = ["GET", "POST", "PUT", "DELETE"];

/** One letter in either case, as a regular expression. */
const eitherCase = (word: string) => [...word].map((c) => `[${c}${c.toLowerCase()}]`).join("");

/**
 * The form of an override {@link resolveEndpointTable} takes, `"/path"` or
 * `"METHOD /path"` (the method in any case): the config schema carries it, and with it
 * the chart's values.schema.json.
 */
export const ENDPOINT_OVERRIDE_PATTERN = new RegExp(
  `^\\s*((${METHODS.map(eitherCase).join("|")})\\s+)?/\\S*\\s*$`,
);

/** True when `name` is an endpoint of the table. */
export function isEndpointName(name: string): name is EndpointName {
  return Object.hasOwn(DEFAULT_ENDPOINTS, name);
}

/**
 * Applies overrides to the default table. Throws an Error naming the key for an
 * unknown endpoint name or an override that is not `[METHOD ]/path`, so a bad
 * configuration fails at start-up, not at the first call.
 */
export function resolveEndpointTable(overrides: EndpointOverrides = {}): EndpointTable {
  const table = {} as EndpointTable;
  for (const name of ENDPOINT_NAMES) {
    const def: EndpointDefinition = DEFAULT_ENDPOINTS[name];
    table[name] = def.enabledByDefault ? def : null;
  }
  for (const [name, value] of Object.entries(overrides)) {
    if (value === undefined) continue;
    if (!isEndpointName(name)) {
      throw new Error(
        `unknown service endpoint "${name}" in the endpoint overrides; known: ${ENDPOINT_NAMES.join(", ")}`,
      );
    }
    if (value === null) {
      table[name] = null;
      continue;
    }
    const parts = value.trim().split(/\s+/);
    const [first = "", second] = parts;
    const method = second === undefined ? DEFAULT_ENDPOINTS[name].method : first.toUpperCase();
    const path = second ?? first;
    if (parts.length > 2 || !METHODS.includes(method) || !path.startsWith("/")) {
      throw new Error(
        `invalid override for service endpoint "${name}": "${value}" (expected "/path" or "METHOD /path")`,
      );
    }
    table[name] = {
      ...DEFAULT_ENDPOINTS[name],
      method: method as HttpMethod,
      path,
      enabledByDefault: true,
    };
  }
  return table;
}

export {
  type CreateTaskFieldNames,
  DEFAULT_CREATE_TASK_FIELDS,
} from "./kinds/trainingjob.js";
