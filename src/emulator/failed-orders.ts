/**
 * What a failed order of a task or NAS leaves: nothing, or, on a service that does not
 * clean up after a failed order (failedOrdersLeaveResources), the resource half made.
 */
import type { NasRecord, TaskRecord } from "./records.js";

/**
 * The task or NAS `id` of a failed order: removed from `records`, or left with a failed
 * status (`FAILED`, `Failed`) when `leave`.
 */
export function failOrder(
  records: { tasks: Map<string, TaskRecord>; nas: Map<string, NasRecord> },
  id: string,
  leave: boolean,
  now: number,
): void {
  const task = records.tasks.get(id);
  const nas = records.nas.get(id);
  if (!leave) {
    records.tasks.delete(id);
    records.nas.delete(id);
    return;
  }
  if (task) {
    task.status = "FAILED";
    task.execInfos.push({ status: "FAILED", info: "the order failed", at: now });
  }
  if (nas) nas.status = "Failed";
  for (const record of [task, nas]) {
    if (!record) continue;
    record.updatedAt = now;
    delete record.knownAt;
  }
}
