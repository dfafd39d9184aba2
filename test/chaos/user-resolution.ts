/**
 * The user's part of the chaos run: an object stopped as CreateOutcomeUnknown (a create
 * whose outcome the operator cannot know, typically a kill between the create-pending
 * write and the create call, not looked up within the list visibility window) is
 * resolved the documented way (docs/controllers.md): the service is checked for a
 * resource carrying the object's client token; found, its id is set as
 * `aidc.io/external-id` (adopt); not found, `aidc.io/create-pending` is removed (create
 * again). The operator never re-creates by itself, so these resolutions are counted.
 */
import { ANNOTATIONS, readCreateState } from "../../src/controllers/managed/decisions.js";
import type { RequestLogEntry } from "../../src/emulator/request-log.js";
import type { RunningEmulator } from "../../src/emulator/server.js";
import type { EmulatorState } from "../../src/emulator/state.js";
import type { KubeClient } from "../../src/runtime/kube.js";
import type { KubeObject, ResourceDescriptor } from "../../src/runtime/resource.js";
import { CLIENT_TOKEN_ENV, clientTokenInDescription } from "../../src/service/schemas/create.js";
import { BV, FS, NAS, TPL } from "../bench/workload.js";
import { accountStates, remoteTemplates } from "./checks.js";

/** The operations that create a remote resource. */
export const CREATE_ENDPOINTS = new Set([
  "subscribeNas",
  "createTrainingTask",
  "createFileSystem",
  "createFileSystemMount",
  "createVolume",
  "createTemplate",
  "saveCciImage",
]);

/**
 * What the "user" did, per stopped create: `Kind/name create <token>: what the service
 * received of the create; the condition's message`.
 */
export interface UserResolutions {
  adopted: string[];
  createdAgain: string[];
}

/** The CreateOutcomeUnknown condition of `obj`, if it stopped so. */
function stopped(obj: KubeObject): { message?: string } | undefined {
  const status = obj.status as
    | { conditions?: { type: string; reason?: string; message?: string }[] }
    | undefined;
  return (status?.conditions ?? []).find(
    (c) => c.type === "Synced" && c.reason === "CreateOutcomeUnknown",
  );
}

/**
 * The id of the remote resource carrying `token` (a template: its name), as the
 * service's console of any account shows it.
 */
function remoteWithToken(emulator: RunningEmulator, res: ResourceDescriptor, token: string) {
  for (const state of accountStates(emulator)) {
    const id = inState(state, res, token);
    if (id) return id;
  }
  return undefined;
}

function inState(state: EmulatorState, res: ResourceDescriptor, token: string) {
  if (res.kind === TPL.kind) return remoteTemplates(state).find((t) => t.name === token)?.id;
  if (res.kind === FS.kind) {
    return [...state.fileSystems.byId.values()].find(
      (f) => clientTokenInDescription(f.description) === token,
    )?.id;
  }
  if (res.kind === BV.kind) {
    return [...state.volumes.records.values()].find(
      (v) => clientTokenInDescription(v.description) === token,
    )?.id;
  }
  if (res.kind === NAS.kind) {
    return [...state.nas.values()].find((n) => clientTokenInDescription(n.description) === token)
      ?.id;
  }
  return [...state.tasks.values()].find((t) => t.env[CLIENT_TOKEN_ENV] === token)?.id;
}

/**
 * What the service received of the create carrying `token` (a template's: its name):
 * never (the process stopped between the create-pending write and the call), or each
 * answer, with the injected fault and whether it acted.
 */
function createsReceived(emulator: RunningEmulator, token: string): string {
  const received = createCalls(emulator, token);
  if (received.length === 0) return "its create never reached the service";
  return `its create reached the service ${received.length} time(s), answered ${answers(received)}`;
}

/** The create calls whose body carries `text`, oldest first. */
function createCalls(emulator: RunningEmulator, text: string): RequestLogEntry[] {
  return emulator.requestLog
    .read()
    .filter((e) => e.endpoint !== undefined && CREATE_ENDPOINTS.has(e.endpoint))
    .filter((e) => JSON.stringify(e.body ?? "").includes(text));
}

/** Each call's answer, with the injected fault and whether it acted. */
function answers(calls: RequestLogEntry[]): string {
  return calls
    .map(
      (e) => `${e.status ?? "dropped"}${e.fault ? ` (${e.fault}${e.acted ? ", acted" : ""})` : ""}`,
    )
    .join(", ");
}

/**
 * What the service received of the creates of the object whose remote name is `name`
 * (`Kind/name` of a CreateRepeated Event), and whether more than one took effect: a
 * repeat of a create the service made is a duplicate.
 */
export function repeatedCreate(
  emulator: RunningEmulator,
  key: string,
): { received: string; duplicate: boolean } {
  const name = key.slice(key.indexOf("/") + 1);
  const calls = createCalls(emulator, JSON.stringify(name));
  const acted = calls.filter((e) => e.acted === true || (!e.fault && e.status === 200));
  return {
    received: `${key}: its creates reached the service ${calls.length} time(s), answered ${answers(calls)}`,
    duplicate: acted.length > 1,
  };
}

/** Resolves every object of `res` in `namespace` stopped as CreateOutcomeUnknown. */
export async function resolveUnknownOutcomes(
  kube: KubeClient,
  emulator: RunningEmulator,
  res: ResourceDescriptor,
  namespace: string,
  done: UserResolutions,
): Promise<void> {
  for (const obj of (await kube.list(res, namespace)).items) {
    const stop = unresolvedStop(res, obj, done);
    if (!stop) continue;
    const { key, token, create } = stop;
    const id = remoteWithToken(emulator, res, token);
    const annotations = id
      ? { [ANNOTATIONS.externalId]: id }
      : { [ANNOTATIONS.createPending]: null };
    await kube.patch(
      res,
      { namespace, name: obj.metadata?.name ?? "" },
      { metadata: { annotations } },
    );
    // A name is a whole string of the body (quoted: not a prefix of another's name).
    const received = createsReceived(
      emulator,
      res.kind === TPL.kind ? JSON.stringify(token) : token,
    );
    (id ? done.adopted : done.createdAgain).push(`${key} ${create}: ${received}; ${stop.message}`);
  }
}

/**
 * The stop of `obj` as CreateOutcomeUnknown that the user has yet to resolve: its
 * `Kind/name`, the token the service is searched for (a template: its name), the
 * pending create (`create <token>`) and the condition's message. Once per pending create
 * (one sent again may be lost and stop again), and only while the condition is about it:
 * after "create again" the condition stays until the new create's status is written,
 * naming the old token, or (a template's, which names the name) with the message resolved.
 */
export function unresolvedStop(
  res: ResourceDescriptor,
  obj: KubeObject,
  done: UserResolutions,
): { key: string; token: string; create: string; message: string } | undefined {
  const message = stopped(obj)?.message;
  const pending = readCreateState(obj.metadata?.annotations).pending?.token;
  if (message === undefined || !pending) return undefined;
  const token = res.kind === TPL.kind ? (obj.spec as { name: string }).name : pending;
  const key = `${res.kind}/${obj.metadata?.name ?? ""}`;
  const create = `create ${pending}`;
  const resolved = [...done.adopted, ...done.createdAgain].some(
    (r) =>
      r.startsWith(`${key} ${create}:`) || (r.startsWith(`${key} `) && r.endsWith(`; ${message}`)),
  );
  return resolved || !message.includes(token) ? undefined : { key, token, create, message };
}
