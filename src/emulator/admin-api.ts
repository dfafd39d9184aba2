/**
 * The emulator's admin API under `/_admin/` (plain JSON, no envelope, no key: the
 * emulator is a test peer on loopback). A field a route does not take is a 400 naming
 * it, so that a typo in a test fails instead of doing nothing. Routes:
 *
 *   GET    /_admin/health                 {ok: true}
 *   GET|POST   /_admin/tenants            the accounts; POST {tenant, apiKey} adds one or
 *                                         sets its key (`?tenant=` on a route targets one)
 *   GET    /_admin/state                  every resource as the service shows it
 *   POST   /_admin/reset                  back to the fixtures; faults and log cleared
 *   POST   /_admin/seed                   add resources / catalog entries (SeedInput)
 *   PATCH  /_admin/tasks/{id}             remote state of a task (status, …)
 *   PATCH  /_admin/nas/{id}               remote state of a NAS (status, usedGB, …)
 *   PATCH  /_admin/cci/{id}               remote state of a CCI instance
 *   PATCH  /_admin/volumes/{id}           remote state of a volume (status, instanceId)
 *   PATCH  /_admin/subscriptions/{key}    force a subscription's outcome now
 *   GET|PUT|DELETE /_admin/faults         fault rules ({rules: [...]} for PUT)
 *   GET|DELETE /_admin/requests           request log (?since=&endpoint=&method=&pathPrefix=)
 *   GET|PATCH  /_admin/config             behaviour (delays, missing operations, result
 *                                         shapes) and the accepted API key
 */
import { z } from "zod";
import { isEndpointName } from "../service/endpoints.js";
import { LIST_ORDERS } from "./behaviour.js";
import type { FaultInjector, FaultRuleInput } from "./faults.js";
import { CREATE_ANSWER_SHAPES, ID_FORMATS, SUBSCRIPTION_KEY_FORMATS } from "./id-formats.js";
import { KIND_SETTING_NAMES, type KindSettingName } from "./kind-settings.js";
import { cciView } from "./kinds/cciinstance.js";
import { fileSystemView } from "./kinds/filesystem.js";
import { nasView } from "./kinds/nasvolume.js";
import { taskView } from "./kinds/trainingjob.js";
import { templateView } from "./kinds/trainingtemplate.js";
import {
  patchCci,
  patchNas,
  patchSubscription,
  patchTask,
  patchVolume,
  RemoteStateConflictError,
  UnknownResourceError,
} from "./remote-state.js";
import type { RequestLog } from "./request-log.js";
import { applySeed, type SeedInput } from "./seeding.js";
import {
  EMPTY_LIST_DATA,
  type EmulatorBehaviour,
  type EmulatorState,
  NAS_STATUS_CASES,
  SUBSCRIPTION_RESULT_SHAPES,
} from "./state.js";
import { DEFAULT_TENANT, type EmulatorTenants, TENANT_NAME_PATTERN } from "./tenants.js";
import { TIMESTAMP_FORMATS } from "./time-formats.js";
import { subscriptionView } from "./views.js";
import { volumeView } from "./volumes.js";

/** Prefix of every admin route. */
export const ADMIN_PREFIX = "/_admin";

/** What the admin API works on. */
export interface AdminTarget {
  state: EmulatorState;
  faults: FaultInjector;
  log: RequestLog;
  /** Replaces the accepted API key of the account the request names (to test Secret rotation). */
  setApiKey(key: string): void;
  /** The accounts (`?tenant=<name>` picks the `state` of the other routes). */
  tenants?: EmulatorTenants;
}

/** An admin answer. */
export interface AdminReply {
  httpStatus: number;
  body: unknown;
}

/** Each kind setting (kind-settings.ts): a non-negative integer. */
const kindSettingsSchema = Object.fromEntries(
  KIND_SETTING_NAMES.map((name) => [name, z.int().min(0).optional()]),
) as Record<KindSettingName, z.ZodOptional<z.ZodInt>>;

/**
 * A change of the behaviour (EmulatorBehaviour, each field optional), as the admin API's
 * `PATCH config` and the chaos run's `--emulator-config` take it; `apiKey` replaces the
 * account's key.
 */
export const configPatchSchema = z.strictObject({
  subscriptionDelayMs: z.int().min(0).optional(),
  saveImageDurationMs: z.int().min(0).optional(),
  listVisibilityDelayMs: z.int().min(0).optional(),
  detailVisibilityDelayMs: z.int().min(0).optional(),
  nasReleaseDelayMs: z.int().min(0).optional(),
  repeatDeleteStatus: z.union([z.literal(0), z.int().min(400).max(599)]).optional(),
  failedOrdersLeaveResources: z.boolean().optional(),
  listsOmitDescription: z.boolean().optional(),
  listsOmitEnv: z.boolean().optional(),
  ...kindSettingsSchema,
  httpStatusMirrorsEnvelope: z.boolean().optional(),
  unknownIdStatus: z.union([z.literal(200), z.int().min(400).max(599)]).optional(),
  pageSizeCap: z.int().min(0).optional(),
  listShrinksAfterFirstPage: z.int().min(0).optional(),
  listGrowsAfterFirstPage: z.int().min(0).optional(),
  missingOperations: z
    .array(z.string().refine(isEndpointName, { message: "not an endpoint name" }))
    .optional(),
  subscriptionResultShape: z.enum(SUBSCRIPTION_RESULT_SHAPES).optional(),
  subscriptionResultRetentionMs: z.int().min(0).optional(),
  nasStatusCase: z.enum(NAS_STATUS_CASES).optional(),
  emptyListData: z.enum(EMPTY_LIST_DATA).optional(),
  idFormat: z.enum(ID_FORMATS).optional(),
  subscriptionKeyFormat: z.enum(SUBSCRIPTION_KEY_FORMATS).optional(),
  timestampFormat: z.enum(TIMESTAMP_FORMATS).optional(),
  createAnswerShape: z.enum(CREATE_ANSWER_SHAPES).optional(),
  listOrder: z.enum(LIST_ORDERS).optional(),
  apiKey: z.string().min(1).optional(),
});

/** The whole state as the service would show it (for tests and debugging). */
export function stateSnapshot(state: EmulatorState): Record<string, unknown> {
  return {
    tasks: [...state.tasks.values()].map((t) => taskView(t, state)),
    nas: [...state.nas.values()].map((n) => nasView(n, state)),
    templates: [...state.templates.values()].map(templateView),
    cci: [...state.cci.values()].map((c) => ({
      ...cciView(c, state, false),
      images: c.images,
      errorDetails: c.errorDetails ?? null,
    })),
    subscriptions: [...state.subscriptions.values()].map((s) => ({
      ...subscriptionView(s),
      kind: s.kind,
    })),
    volumes: [...state.volumes.records.values()].map(volumeView),
    fileSystems: [...state.fileSystems.byId.values()].map(fileSystemView),
    trainingProducts: state.trainingProducts,
    nasProducts: state.nasProducts,
  };
}

function behaviourOf(state: EmulatorState): EmulatorBehaviour {
  return { ...state.behaviour, missingOperations: [...state.behaviour.missingOperations] };
}

/**
 * One admin request as it arrived (`text`, its body): the account `?tenant=` names (or
 * `default`) is its target; a body that is not JSON and an unknown account are 400
 * and 404.
 */
export function adminRequest(
  target: Omit<AdminTarget, "state" | "setApiKey"> & { tenants: EmulatorTenants },
  method: string,
  path: string,
  query: URLSearchParams,
  text: string | undefined,
): AdminReply {
  let body: unknown;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    return { httpStatus: 400, body: { error: "admin request body is not JSON" } };
  }
  const tenant = query.get("tenant") ?? DEFAULT_TENANT;
  if (!target.tenants.names().includes(tenant)) {
    return { httpStatus: 404, body: { error: `no tenant ${tenant}` } };
  }
  const { tenants } = target;
  const state = tenants.get(tenant).state;
  const setApiKey = (key: string) => tenants.set(tenant, key);
  return handleAdmin({ ...target, state, setApiKey }, method, path, query, body);
}

/** Handles one admin request; unknown routes get 404, invalid input 400. */
export function handleAdmin(
  target: AdminTarget,
  method: string,
  path: string,
  query: URLSearchParams,
  body: unknown,
): AdminReply {
  const route = path.slice(ADMIN_PREFIX.length);
  const [, resource = "", id] = route.split("/").map((s) => decodeURIComponent(s));
  const { state } = target;
  try {
    switch (`${method} ${resource}${id === undefined ? "" : "/:id"}`) {
      case "GET health":
        return ok({ ok: true });
      case "GET tenants":
        return ok({ tenants: target.tenants?.names() ?? [] });
      case "POST tenants": {
        const { tenant, apiKey } = z
          .strictObject({
            tenant: z.string().regex(TENANT_NAME_PATTERN),
            apiKey: z.string().min(1),
          })
          .parse(body ?? {});
        if (!target.tenants) return { httpStatus: 404, body: { error: "no accounts here" } };
        try {
          target.tenants.set(tenant, apiKey);
        } catch (err) {
          return { httpStatus: 409, body: { error: (err as Error).message } };
        }
        return ok({ tenants: target.tenants.names() });
      }
      case "GET state":
        state.advance();
        return ok(stateSnapshot(state));
      case "POST reset":
        state.reset();
        target.faults.clear();
        target.log.clear();
        return ok({ ok: true });
      case "POST seed":
        return ok(applySeed(state, (body ?? {}) as SeedInput));
      case "PATCH tasks/:id":
        patchTask(state, id ?? "", body);
        return ok({ ok: true });
      case "PATCH nas/:id":
        patchNas(state, id ?? "", body);
        return ok({ ok: true });
      case "PATCH cci/:id":
        patchCci(state, id ?? "", body);
        return ok({ ok: true });
      case "PATCH volumes/:id":
        patchVolume(state, id ?? "", body);
        return ok({ ok: true });
      case "PATCH subscriptions/:id":
        patchSubscription(state, id ?? "", body);
        return ok({ ok: true });
      case "GET faults":
        return ok({ rules: target.faults.list() });
      case "PUT faults": {
        const rules = z.strictObject({ rules: z.array(z.unknown()) }).parse(body).rules;
        target.faults.set(rules as FaultRuleInput[]);
        return ok({ rules: target.faults.list() });
      }
      case "DELETE faults":
        target.faults.clear();
        return ok({ rules: [] });
      case "GET requests":
        return ok({
          entries: target.log.read({
            ...(query.get("since") ? { since: Number(query.get("since")) } : {}),
            ...(query.get("endpoint") ? { endpoint: query.get("endpoint") as string } : {}),
            ...(query.get("method") ? { method: query.get("method") as string } : {}),
            ...(query.get("pathPrefix") ? { pathPrefix: query.get("pathPrefix") as string } : {}),
          }),
          lastSeq: target.log.lastSeq(),
        });
      case "DELETE requests":
        target.log.clear();
        return ok({ ok: true });
      case "GET config":
        return ok(behaviourOf(state));
      case "PATCH config": {
        const { apiKey, ...behaviour } = configPatchSchema.parse(body ?? {});
        if (apiKey !== undefined) target.setApiKey(apiKey);
        state.behaviour = { ...state.behaviour, ...behaviour };
        return ok(behaviourOf(state));
      }
      default:
        return { httpStatus: 404, body: { error: `no admin route ${method} ${path}` } };
    }
  } catch (err) {
    if (err instanceof z.ZodError) {
      return { httpStatus: 400, body: { error: z.prettifyError(err) } };
    }
    if (err instanceof UnknownResourceError)
      return { httpStatus: 404, body: { error: err.message } };
    if (err instanceof RemoteStateConflictError) {
      return { httpStatus: 409, body: { error: err.message } };
    }
    throw err;
  }
}

function ok(body: unknown): AdminReply {
  return { httpStatus: 200, body };
}
