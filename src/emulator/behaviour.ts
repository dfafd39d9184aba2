/**
 * How the emulated service behaves where the spec leaves it open (timings, error
 * statuses, shapes, missing operations): switches set at start and changeable at run
 * time through the admin API (admin-api.ts).
 */
import type { CreateAnswerShape, IdFormat, SubscriptionKeyFormat } from "./id-formats.js";
import { type KindBehaviour, kindSettingDefaults } from "./kind-settings.js";
import type { TimestampFormat } from "./time-formats.js";

/**
 * Behaviour switches of the emulator, changeable at run time through the admin API; the
 * kinds' own settings (`KindBehaviour`, declared in src/emulator/kinds/<kind>.settings.ts)
 * among them.
 */
export interface EmulatorBehaviour extends KindBehaviour {
  /** How long a subscription stays Pending. */
  subscriptionDelayMs: number;
  /** How long saveImageStatus stays true after a save-image. */
  saveImageDurationMs: number;
  /** How long after acceptance a new task or NAS appears in list operations. */
  listVisibilityDelayMs: number;
  /**
   * How long after its order succeeds a new task or NAS is known to its own operations
   * (detail, and every operation on its id); before, and while its order is pending, they
   * answer the unknown-id status, as a service whose resource store lags its order
   * system would. 0 = known from acceptance.
   */
  detailVisibilityDelayMs: number;
  /**
   * How long a deleted NAS stays, with status `Releasing`, in its detail and the list
   * before it is gone (the spec does not say whether a delete is immediate); 0 =
   * gone at once.
   */
  nasReleaseDelayMs: number;
  /**
   * Envelope status of a delete of a resource already being deleted (a NAS `Releasing`,
   * a task `DELETING`, a template, a volume or file system `deleting`): 0 accepts it and
   * changes nothing; 400 or 409 refuse it as "already being released", a 5xx fails it, as
   * a service may (the spec does not say).
   */
  repeatDeleteStatus: number;
  /**
   * Whether a task or NAS whose order fails after it was accepted stays, half made: listed
   * and readable with status `FAILED` (a task) or `Failed` (a NAS), its result naming no
   * resource, as a service that does not clean up after a failed order would. Default:
   * a failed order leaves nothing behind.
   */
  failedOrdersLeaveResources: boolean;
  /**
   * Whether the NAS, volume and file system lists answer their records without
   * `description` (the detail still has it), as a service whose list leaves fields to the
   * detail would: a create's client token is then found by no list.
   */
  listsOmitDescription: boolean;
  /**
   * Whether the task and template lists answer their records without `env` (a task's
   * detail still has it), as a service that leaves variables to the detail would: the
   * client reads each listed task in detail to find a create's token, and a template
   * (no detail) shows no owner mark at all.
   */
  listsOmitEnv: boolean;
  /** Whether error envelopes also set the HTTP status (default: HTTP 200 for every envelope). */
  httpStatusMirrorsEnvelope: boolean;
  /**
   * Envelope status of a request for an unknown id (task, NAS, pod, template, …): 404
   * by default; a service that shows no other error answers 500; 200 answers success
   * with an empty object as `data` ("an empty object when there is no business data").
   */
  unknownIdStatus: number;
  /** Largest page a list answers, whatever pageSize asks (echoed as the page's pageSize); 0 = no cap. */
  pageSizeCap: number;
  /**
   * Pages after the first answered as if that many records listed before them had been
   * deleted since page 1 was read (offset paging over a list another client changes):
   * their offset moves up and `totalRows` drops by that many, so a walk skips records
   * unless it notices. 0 = pages of one unchanged list.
   */
  listShrinksAfterFirstPage: number;
  /**
   * Pages after the first answered as if that many records had been made since page 1
   * was read: `totalRows` rises by that many, and under `newestFirst` (where new records
   * land first) the offset moves back, so a page repeats records of the one before;
   * otherwise they land last. The new records themselves are not shown. 0 = no growth.
   */
  listGrowsAfterFirstPage: number;
  /**
   * Path prefix the service API is served under (e.g. `/api/gw`); requests outside it
   * get a bare 404. Fixed at start (`RunningEmulator.url` includes it). Default "".
   */
  basePath: string;
  /**
   * Operations (endpoint names) the emulated service does not have: their path answers
   * a bare HTTP 404 without an envelope, as a router does for an unknown path. Plays a
   * real service whose path differs from an assumed one.
   */
  missingOperations: string[];
  /**
   * The shape of subscription results: `canonical` ({key, state: "Pending" |
   * "Succeeded" | "Failed", instanceId, message}); `integerStatus` ({key, status: 1
   * pending | 2 succeeded | 3 failed, instanceId, message}); `renamedFields` ({orderKey,
   * orderState: "PENDING" | "DONE" | "FAILED", createdResourceId, remark}).
   */
  subscriptionResultShape: SubscriptionResultShape;
  /**
   * How long a subscription result is answered after its order resolved; then its key is
   * unknown (the unknown-id status), as a service that keeps results only a while would
   * answer. 0 = kept for ever.
   */
  subscriptionResultRetentionMs: number;
  /**
   * The letter case of NAS status words on the wire: `asShown` (`Creating`, `Running`,
   * as the spec shows them), `upper` (`RUNNING`, as every other status the spec shows)
   * or `lower`.
   */
  nasStatusCase: NasStatusCase;
  /**
   * The `data` of a list page with no records: `page` (`{records: [], pageNo, pageSize,
   * totalRows: 0}`), `null` or `emptyObject` (`{}`), as a service with nothing to list
   * may answer (the spec shows only the page).
   */
  emptyListData: EmptyListData;
  /**
   * The shape of new ids (id-formats.ts): `default` (`nas-<tag>000001`), `numeric` (JSON
   * numbers in every answer, numbers or text accepted in requests) or `uuid`.
   */
  idFormat: IdFormat;
  /** The subscription key a create answers: `string` or `number` (a JSON number). */
  subscriptionKeyFormat: SubscriptionKeyFormat;
  /**
   * The shape of every time in an answer (time-formats.ts): `asShown` (`YYYY-MM-DD
   * HH:MM:SS` and ISO 8601 with `Z`, as the spec shows), `epochMillis` (JSON numbers) or
   * `offset` (ISO 8601 at `+08:00`).
   */
  timestampFormat: TimestampFormat;
  /**
   * The `data` of a create's answer (a task create, a NAS subscribe; the spec: "a result
   * key"): `key` (the key itself), or an object holding it: `subscriptionKey`
   * (`{subscriptionKey}`), `keyObject` (`{key}`), `orderId` (`{orderId}`),
   * `keyAndInstanceId` (`{subscriptionKey, instanceId}`, the id of the resource ordered),
   * `renamedField` (`{requestNo}`: a field the client reads only when configured).
   */
  createAnswerShape: CreateAnswerShape;
  /**
   * The order of every list: `oldestFirst` (as made), `newestFirst` or `byName` (names
   * in code-point order, records of one name as made).
   */
  listOrder: ListOrder;
}

/** Orders the emulator can list records in (see EmulatorBehaviour). */
export const LIST_ORDERS = ["oldestFirst", "newestFirst", "byName"] as const;
/** An order of the lists. */
export type ListOrder = (typeof LIST_ORDERS)[number];

/** What the emulator answers as `data` for an empty list page (see EmulatorBehaviour). */
export const EMPTY_LIST_DATA = ["page", "null", "emptyObject"] as const;
/** An answer for an empty list page. */
export type EmptyListData = (typeof EMPTY_LIST_DATA)[number];

/** Letter cases the emulator can give NAS status words (see EmulatorBehaviour). */
export const NAS_STATUS_CASES = ["asShown", "upper", "lower"] as const;
/** A letter case of NAS status words. */
export type NasStatusCase = (typeof NAS_STATUS_CASES)[number];

/** Shapes the emulator can give subscription results (see EmulatorBehaviour). */
export const SUBSCRIPTION_RESULT_SHAPES = ["canonical", "integerStatus", "renamedFields"] as const;
/** A shape of subscription results. */
export type SubscriptionResultShape = (typeof SUBSCRIPTION_RESULT_SHAPES)[number];

/**
 * Default behaviour: 2 s subscriptions, 3 s image saves, immediate list visibility, the
 * kinds' settings at their declared defaults.
 */
export const DEFAULT_BEHAVIOUR: EmulatorBehaviour = {
  ...kindSettingDefaults(),
  subscriptionDelayMs: 2000,
  saveImageDurationMs: 3000,
  listVisibilityDelayMs: 0,
  detailVisibilityDelayMs: 0,
  nasReleaseDelayMs: 0,
  repeatDeleteStatus: 0,
  failedOrdersLeaveResources: false,
  listsOmitDescription: false,
  listsOmitEnv: false,
  httpStatusMirrorsEnvelope: false,
  unknownIdStatus: 404,
  pageSizeCap: 0,
  listShrinksAfterFirstPage: 0,
  listGrowsAfterFirstPage: 0,
  basePath: "",
  missingOperations: [],
  subscriptionResultShape: "canonical",
  subscriptionResultRetentionMs: 0,
  nasStatusCase: "asShown",
  emptyListData: "page",
  idFormat: "default",
  subscriptionKeyFormat: "string",
  timestampFormat: "asShown",
  createAnswerShape: "key",
  listOrder: "oldestFirst",
};

/** The emulator's on/off modes: the names of EmulatorBehaviour's boolean switches. */
export type EmulatorMode = {
  [K in keyof EmulatorBehaviour]: EmulatorBehaviour[K] extends boolean ? K : never;
}[keyof EmulatorBehaviour];

/** Every mode's name, read off the defaults (a boolean switch added there is one). */
export const EMULATOR_MODES = (Object.keys(DEFAULT_BEHAVIOUR) as (keyof EmulatorBehaviour)[])
  .filter((k) => typeof DEFAULT_BEHAVIOUR[k] === "boolean")
  .sort() as EmulatorMode[];

/** The behaviour that turns `names` on; an unknown name is an error naming it. */
export function emulatorModes(names: string[]): Partial<Record<EmulatorMode, true>> {
  const on: Partial<Record<EmulatorMode, true>> = {};
  for (const name of names) {
    const mode = EMULATOR_MODES.find((m) => m === name);
    if (!mode) {
      throw new Error(`unknown emulator mode "${name}" (modes: ${EMULATOR_MODES.join(", ")})`);
    }
    on[mode] = true;
  }
  return on;
}
