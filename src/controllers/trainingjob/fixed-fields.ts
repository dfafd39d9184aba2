/**
 * The TrainingJob fields a submitted task cannot change (the service changes only its
 * description and ports), as an adopted task can contradict them (ManagedKind.fixedFields).
 */
import type { FixedFieldDiff } from "../managed/external-client.js";
import { contradictions } from "../managed/fixed-fields.js";
import type { TrainingJobObject, TrainingJobRemote } from "./objects.js";

/**
 * The spec fields of `obj` that the adopted task of `remote` contradicts. The spec's own
 * values only: a field left to the template, the source job or the service's default
 * contradicts nothing. env and storage are not compared: the task's env holds the
 * operator's entries besides the user's, and its mounts come from resolved references.
 */
export function taskFixedFields(
  obj: TrainingJobObject,
  remote: TrainingJobRemote,
): FixedFieldDiff[] {
  const s = obj.spec;
  const t = remote.observation.task;
  return contradictions([
    ["taskName", s.taskName, t.name],
    ["productCode", s.productCode, t.resource?.productCode],
    ["workerCount", s.workerCount, t.resource?.workerCount],
    ["image", s.image, t.image],
    ["imageType", s.imageType, t.imageType],
    ["trainingType", s.trainingType, t.trainingType],
    ["trainingFramework", s.trainingFramework, t.trainingFramework],
    ["priority", s.priority, t.priority],
    ["startCommand", s.startCommand, t.startCommand],
    ["enableAutoRetry", s.enableAutoRetry, t.enableAutoRetry],
    ["maxRetryCount", s.maxRetryCount, t.maxRetryCount],
    ["enableTimeoutCancel", s.enableTimeoutCancel, t.enableTimeoutCancel],
    ["timeoutHours", s.timeoutHours, t.timeoutHours],
  ]);
}
