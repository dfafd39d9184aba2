/**
 * The TrainingJob's task behind the generic managed reconciler's ExternalClient:
 * preflight (raw mounts, required fields, product; the references are resolved by the
 * loop's reference step, references.ts), create with the client token as a task env
 * var, subscription polling, lookup by token (and its proven absence), observe (detail,
 * storages, pods, their resources and ports, task-parts.ts; on the first look at a task
 * the detail alone), update (description, ports, exposure) and delete.
 */
import { AddressAllowList } from "../../config/cidr.js";
import { TRAINING_JOB_REASONS } from "../../crds/trainingjob.js";
import {
  type AccountCalls,
  EndpointDisabledError,
  endpointConfigKey,
  OWNER_MARK_ENV,
  ServiceNotFoundError,
  ServiceOperationMissingError,
  type TrainingTask,
} from "../../service/index.js";
import { terminalError } from "../event-reasons.js";
import type { ManagedCall, Observation, UpdateResult } from "../managed/call.js";
import { absenceVerdict, type KindClient } from "../managed/external-client.js";
import { parseOwnerMark } from "../managed/tenancy.js";
import { EXPOSURE_ADDRESS_REFUSED, EXPOSURE_DISABLED, refusedExposure } from "./expose-sync.js";
import { DEFAULT_FULL_READ_INTERVAL_MS, FullReads, listedStatusCurrent } from "./listed-task.js";
import type { TrainingJobObject, TrainingJobRemote } from "./objects.js";
import { describePortActions, openPort, type PortAction, portActions } from "./ports.js";
import type { TrainingJobRefs } from "./references.js";
import { lastExecInfo, remoteDescription, remoteStatus, type TaskObservation } from "./remote.js";
import { checkTrainingProduct, prepareCreate, taskNameOf } from "./request.js";
import { classifyTaskStatus, readyOf, type TaskStatusTable } from "./status-class.js";
import { firstLookDefers, observePods } from "./task-parts.js";

const R = TRAINING_JOB_REASONS.names;

/** Settings of the TrainingJob's external client. */
export interface TrainingJobClientOptions {
  /** Remote status words → class, over the defaults. */
  statusClasses?: TaskStatusTable;
  /**
   * `spec.exposePorts` is honoured (by the exposure controller); false: a job asking
   * for it is refused `ExposureDisabled`.
   */
  exposure?: boolean;
  /** The ranges an external address must lie in to be exposed. Default: none. */
  exposureAddresses?: AddressAllowList;
  /** `adoption.namespaces`: where raw `storageId` mounts of storages not the namespace's own are allowed. */
  adoptionNamespaces?: readonly string[];
  /**
   * How long a settled job's poll may be answered from the task list before its
   * storages and pods are read again in detail (listed-task.ts). Default 1 hour.
   */
  fullReadIntervalMs?: number;
  /**
   * When the account's tasks' parts were last read: the client is made per reconcile,
   * so the controller keeps this per account. Default a new memory (at that interval).
   */
  fullReads?: FullReads;
  /** The account's ServiceConnection (undefined: the default), whose catalog hints name. */
  connection?: string | undefined;
}

/**
 * Operations whose paths are assumptions and without which a task order cannot
 * finish: its subscription result and the task list (lookup by client token). The pod
 * list and open-port are not needed: without them a task is observed without pods, or
 * its ports are not opened.
 */
export const TASK_ORDER_OPERATIONS = [
  "getTrainingSubscriptionResult",
  "listTrainingTasks",
] as const;

/** The ExternalClient of TrainingJob tasks. */
export function trainingJobClient(
  service: AccountCalls,
  options: TrainingJobClientOptions = {},
): KindClient<TrainingJobObject, TrainingJobRemote, TrainingJobRefs> {
  const addresses = options.exposureAddresses ?? new AddressAllowList([]);
  const adoption = options.adoptionNamespaces ?? [];
  const fullReads =
    options.fullReads ?? new FullReads(options.fullReadIntervalMs ?? DEFAULT_FULL_READ_INTERVAL_MS);

  /** What an observation of the task implies: status, Ready, and the changes to make. */
  async function judge(
    call: ManagedCall<TrainingJobObject, TrainingJobRefs>,
    observation: TaskObservation,
  ): Promise<Observation<TrainingJobRemote> & { exists: true }> {
    const { task, pods } = observation;
    const status = remoteStatus(observation, call.obj.status);
    const cls = classifyTaskStatus(task.status, options.statusClasses);
    const job = call.obj;
    const descriptionDiffers = remoteDescription(task) !== (job.spec.description ?? "");
    // The service opens ports only on a running task's pods.
    const ports = cls === "running" ? portActions(job.spec.ports, pods ?? []) : [];
    const exposureRefused = options.exposure
      ? refusedExposure(job, status.pods ?? [], addresses)
      : [];
    const exposureOff = !options.exposure && job.spec.exposePorts === true;
    return {
      exists: true,
      upToDate:
        !descriptionDiffers && ports.length === 0 && exposureRefused.length === 0 && !exposureOff,
      differs: [
        ...(descriptionDiffers ? ["description"] : []),
        ...(ports.length ? ["ports"] : []),
        ...(exposureRefused.length || exposureOff ? ["exposePorts"] : []),
      ],
      ready: readyOf(cls, task.status, lastExecInfo(task)),
      remote: { observation, status, descriptionDiffers, ports, exposureRefused },
    };
  }

  /**
   * The observation of `task` (read in detail or listed) with its storages and pods
   * read now; noted as a full read unless part of the pods was left out.
   */
  async function withParts(
    call: ManagedCall<TrainingJobObject, TrainingJobRefs>,
    id: string,
    task: TaskObservation["task"],
  ): Promise<Observation<TrainingJobRemote> & { exists: true }> {
    const [storages, podsRead] = await Promise.all([
      service.tasks.storages(id),
      observePods(service.pods, id),
    ]);
    const { pods, note } = podsRead;
    const observation: TaskObservation = {
      task,
      storages,
      ...(pods ? { pods } : { podsOmitted: true }),
      ...(note ? { note } : {}),
    };
    // A read that left part of the pods out is not a full one: the next poll reads in
    // detail again, so the pods come back once the service answers for them.
    if (note) fullReads.forget(id);
    else fullReads.record(id);
    return judge(call, observation);
  }

  return {
    requireOperations: () => service.requireOperations(TASK_ORDER_OPERATIONS, "a task order"),
    ownerOf(remote) {
      return parseOwnerMark(remote.observation.task.env?.[OWNER_MARK_ENV]);
    },

    async preflight(call) {
      const prepared = prepareCreate(call, "preflight", adoption);
      if (prepared.refusal) return prepared.refusal;
      const { productCode, workerCount } = prepared.request;
      const products = await service.tasks.products();
      return checkTrainingProduct(products, productCode, workerCount, options.connection);
    },

    async create(call, token) {
      const prepared = prepareCreate(call, token, adoption);
      if (prepared.refusal) {
        throw terminalError(prepared.refusal.reason, prepared.refusal.message);
      }
      return { subscriptionKey: await service.tasks.create(prepared.request) };
    },

    async pollSubscription(_call, key) {
      const r = await service.tasks.subscriptionResult(key);
      if (r.state === "Pending") return { state: "Pending", empty: r.empty };
      if (r.state === "Failed") {
        return { state: "Failed", message: r.message ?? "the service gave no reason" };
      }
      return r.instanceId
        ? { state: "Succeeded", externalId: r.instanceId }
        : { state: "Succeeded" };
    },

    lookupByToken(call, { token }) {
      return service.tasks.findIdsByClientToken(token, taskNameOf(call.obj));
    },

    async tokenAbsence(_call, { token }) {
      return absenceVerdict(await service.tasks.provesTokenAbsent(token));
    },

    listIds() {
      return service.tasks.listIds();
    },

    async observe(call, id): Promise<Observation<TrainingJobRemote>> {
      let task: TrainingTask;
      try {
        task = await service.tasks.get(id);
      } catch (err) {
        if (err instanceof ServiceNotFoundError) return { exists: false };
        throw err;
      }
      if (firstLookDefers(call.obj, id)) {
        // What Ready needs, no more: storages and pods follow in a follow-up look soon.
        fullReads.hold(id, task);
        return { ...(await judge(call, { task, partsDeferred: true })), partial: true };
      }
      return withParts(call, id, task);
    },

    async observeFromList(call, id, maxAgeMs) {
      // The follow-up of a first look: the task that look read, its storages and pods
      // read now, and no list walk (a follow-up is not routine observation: its walks
      // would run outside the routine budget, once per poll interval while a fleet settles).
      const held = fullReads.takeHeld(id);
      if (held) {
        const whole = await withParts(call, id, held.task);
        return whole.upToDate ? { observation: whole, fetchedAt: held.at } : undefined;
      }
      // A task listed without env, and none kept from a detail read, is read in detail
      // (its env holds the owner mark and the status's env names).
      const view = await service.tasks.listSnapshot(maxAgeMs);
      const task = view?.records.get(id);
      if (!view || !task?.env || task.status === undefined) return undefined;
      // Storages and pods are not in the list: the previous status keeps them.
      const observation = await judge(call, { task, fromList: true });
      const current = listedStatusCurrent(observation.remote.status, call.obj.status);
      if (!observation.upToDate || !current) return undefined;
      if (!fullReads.due(id)) return { observation, fetchedAt: view.fetchedAt };
      // Due a read of its storages and pods (the follow-up of a first look, the hourly
      // one, the first after a start): the listed task is the one the status shows, so
      // they alone are read. A change they ask for is made after a detail read.
      const whole = await withParts(call, id, task);
      return whole.upToDate ? { observation: whole, fetchedAt: view.fetchedAt } : undefined;
    },

    async update(call, id, remote): Promise<UpdateResult> {
      const done: string[] = [];
      if (remote.descriptionDiffers) {
        await service.tasks.updateDesc(id, call.obj.spec.description ?? "");
        done.push("description updated");
      }
      // A disabled open-port, or one the service does not answer, leaves the ports
      // closed with a refusal naming the config key; the task stays observed. One not
      // answered a while ago (service.operationRecheckMs) is tried again.
      const openState = service.operationState("openPodPort");
      let canOpen = openState !== "disabled" && openState !== "missing";
      const runnable = remote.ports.filter((a) => a.action === "close" || canOpen);
      const ran: PortAction[] = [];
      for (const a of runnable) {
        if (a.action === "open") {
          if (!canOpen) continue;
          try {
            await openPort(service.pods, id, a);
          } catch (err) {
            if (!(err instanceof ServiceOperationMissingError)) throw err;
            canOpen = false;
            continue;
          }
        } else {
          await service.pods.closePort(id, a.podName, a.port);
        }
        ran.push(a);
      }
      if (ran.length > 0) done.push(describePortActions(ran));
      const meanwhile = done.length ? `; meanwhile ${done.join("; ")}` : "";
      if (!options.exposure && call.obj.spec.exposePorts === true) {
        return {
          outcome: "Refused",
          reason: EXPOSURE_DISABLED.reason,
          message: `${EXPOSURE_DISABLED.message}${meanwhile}`,
        };
      }
      if (remote.exposureRefused.length > 0) {
        return {
          outcome: "Refused",
          reason: EXPOSURE_ADDRESS_REFUSED.reason,
          message: `${EXPOSURE_ADDRESS_REFUSED.message}: ${remote.exposureRefused.join(", ")}${meanwhile}`,
        };
      }
      if (ran.length < remote.ports.length) {
        return {
          outcome: "Refused",
          reason: R.OpenPortRefused,
          message: `spec.ports asks for ports that are not open, but the open-port operation is not configured or not answered by the service (${endpointConfigKey("openPodPort")})${meanwhile}`,
        };
      }
      return { outcome: "Applied", message: done.join("; ") || "in sync" };
    },

    deleteConfigured() {
      return service.isEndpointEnabled("deleteTrainingTask");
    },

    async delete(_call, id) {
      fullReads.forget(id);
      try {
        await service.tasks.delete(id);
        // The service may show the task (DELETING) a while: observed until gone.
        return "InProgress";
      } catch (err) {
        if (err instanceof EndpointDisabledError) return "NotConfigured";
        if (err instanceof ServiceNotFoundError) return "Deleted";
        throw err;
      }
    },
  };
}
