/**
 * The endpoint table: every operation of the service by name, with its method, path
 * and whether it may be retried. The spec documents most paths; operations it only
 * refers to (subscription results, task / template / pod lists, pod open-port) and
 * those it does not name at all (deletes, NAS list and detail) get default paths here
 * (see docs/service-assumptions.md), which the operator configuration can override or
 * disable by name. Deletes of tasks, NAS and templates are disabled until a path is
 * configured (a kind's own module may decide otherwise: kinds/filesystem.ts).
 */
import {
  assumed,
  documented,
  type EndpointDeclarations,
  type EndpointDefinition,
  type HttpMethod,
} from "./endpoint-definition.js";
import { isServiceId, quoteId, SERVICE_ID_RULE } from "./ids.js";
import { KIND_ENDPOINT_TABLES, KIND_ENDPOINTS } from "./kinds/index.js";

export {
  assumed,
  documented,
  type EndpointDeclarations,
  type EndpointDefinition,
  type HttpMethod,
} from "./endpoint-definition.js";

/**
 * The operations every kind shares or that have no kind module of their own. A kind
 * declares its own operations in src/service/kinds/<kind>.ts (see
 * {@link DEFAULT_ENDPOINTS}).
 */
export const CORE_ENDPOINTS = {
  // Training tasks (documented)
  createTrainingTask: documented("POST", "/v1/subscription/training/create", false),
  getTrainingTask: documented("GET", "/v1/training/instance/{id}/detail", true),
  updateTrainingTaskDesc: documented("PUT", "/v1/training/instance/{id}/desc", true),
  saveTrainingTaskAsTemplate: documented(
    "POST",
    "/v1/training/instance/{id}/saveAsTemplate",
    false,
  ),
  listTrainingTaskStorages: documented("GET", "/v1/training/instance/{id}/storages", true),
  getPodResource: documented("GET", "/v1/training/instance/{id}/{podName}/resource", true),
  listPodOpenPorts: documented("GET", "/v1/training/instance/{id}/{podName}/open-port/list", true),
  closePodPort: documented("POST", "/v1/training/instance/{id}/{podName}/close-port", false),
  // Training tasks (referenced by the spec without a path)
  getTrainingSubscriptionResult: assumed("GET", "/v1/subscription/training/result/{key}", true),
  listTrainingTasks: assumed("GET", "/v1/training/instance/list", true),
  listPods: assumed("GET", "/v1/training/instance/{id}/pods", true),
  openPodPort: assumed("POST", "/v1/training/instance/{id}/{podName}/open-port", false),
  // Training tasks (not named by the spec)
  deleteTrainingTask: assumed("DELETE", "/v1/training/instance/{id}", true, false),
  // Templates
  createTemplate: documented("POST", "/v1/training/template/create", false),
  updateTemplate: documented("PUT", "/v1/training/template/{id}/update", true),
  listTemplates: assumed("GET", "/v1/training/template/list", true),
  deleteTemplate: assumed("DELETE", "/v1/training/template/{id}", true, false),
  // Products
  listTrainingProducts: documented("GET", "/v1/product/list-for-training-task", true),
  listNasProducts: documented("GET", "/v1/product/list-for-nas-storage", true),
  isNasProductAvailable: documented("POST", "/v1/product/nas-storage-available", true),
  // NAS storage
  subscribeNas: documented("POST", "/v1/subscription/nasStorage/create", false),
  scaleNas: documented("POST", "/v1/nasStorage/instance/{id}/scale", false),
  updateNasMountPath: documented("PUT", "/v1/nasStorage/instance/{id}/mountPath", true),
  getNasSubscriptionResult: assumed("GET", "/v1/subscription/nasStorage/result/{key}", true),
  listNas: assumed("GET", "/v1/nasStorage/instance/list", true),
  getNas: assumed("GET", "/v1/nasStorage/instance/{id}/detail", true),
  deleteNas: assumed("DELETE", "/v1/nasStorage/instance/{id}", true, false),
  // CCI
  listCci: documented("GET", "/v1/cci/instance/list", true),
  getCci: documented("GET", "/v1/cci/instance/{id}", true),
  getCciErrorDetails: documented("GET", "/v1/cci/instance/{id}/error-details", true),
  saveCciImage: documented("POST", "/v1/cci/instance/{id}/save-image", false),
} as const satisfies Record<string, EndpointDefinition>;

/**
 * Throws when a kind declares an operation name that the core table or another kind
 * already has (a later spread would silently replace the earlier row).
 */
export function checkEndpointNames(
  core: EndpointDeclarations,
  kinds: Readonly<Record<string, EndpointDeclarations>>,
): void {
  const owner = new Map<string, string>(Object.keys(core).map((n) => [n, "the core table"]));
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

checkEndpointNames(CORE_ENDPOINTS, KIND_ENDPOINT_TABLES);

/**
 * The default endpoint table: {@link CORE_ENDPOINTS} and the operations each kind
 * declares in its own module of src/service/kinds (gathered by the generated
 * src/service/kinds/index.ts). Keys are the endpoint names used in configuration; the
 * emulator routes the same table.
 */
export const DEFAULT_ENDPOINTS = { ...CORE_ENDPOINTS, ...KIND_ENDPOINTS } as const satisfies Record<
  string,
  EndpointDefinition
>;

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

/** A path parameter that is not a well-formed id; no request was sent. */
export class InvalidPathParameterError extends Error {}

/**
 * Fills `{param}` placeholders with URI-encoded values. Throws an Error when a
 * placeholder has no value or a value is empty, so that no request goes to a
 * collapsed path such as `/v1/training/instance//detail`, and an
 * `InvalidPathParameterError` when a value is not a well-formed id (`SERVICE_ID_PATTERN`):
 * a segment `.` or `..` would send the request to another path, since encoding leaves
 * dots as they are.
 */
export function renderPath(template: string, params: Record<string, string> = {}): string {
  return template.replace(/\{(\w+)\}/g, (_, key: string) => {
    const value = params[key];
    if (value === undefined || value === "") {
      throw new Error(`missing value for path parameter {${key}} of ${template}`);
    }
    if (!isServiceId(value)) {
      throw new InvalidPathParameterError(
        `the ${key} ${quoteId(value)} is not a well-formed service id (${SERVICE_ID_RULE}); nothing was sent`,
      );
    }
    return encodeURIComponent(value);
  });
}

/**
 * Request fields the spec's field lists do not have, by the name the client uses, with
 * the wire name sent by default. The task create's field list names no source for
 * createType COPY or TEMPLATE ("createType … COPY (copy an existing task) or TEMPLATE
 * (from a template)"), so the client sends these assumed fields, only when set; the
 * operator config (`service.createTaskFields`) renames them for a service that spells
 * them otherwise.
 */
export const DEFAULT_CREATE_TASK_FIELDS = {
  /** The task a COPY create copies. */
  sourceTaskId: "sourceTaskId",
  /** The template a TEMPLATE create starts from. */
  templateId: "templateId",
} as const;

/** Wire names of the assumed create fields (see {@link DEFAULT_CREATE_TASK_FIELDS}). */
export type CreateTaskFieldNames = Record<keyof typeof DEFAULT_CREATE_TASK_FIELDS, string>;
