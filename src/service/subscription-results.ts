/**
 * Reading the result of an asynchronous create (a NAS subscription, a task create):
 * the configured mapping of the result's shape applied, and an envelope whose data
 * cannot be read reported as `ServiceResultShapeError` naming the config key to set.
 */
import { ServiceMalformedResponseError, ServiceResultShapeError } from "./errors.js";
import type { OperationCaller } from "./operation-caller.js";
import {
  type SubscriptionResult,
  type SubscriptionResultMapping,
  subscriptionResultSchema,
} from "./schemas/subscription.js";

/** The result of subscription `key` through operation `name`, read with `mapping`. */
export async function readSubscriptionResult(
  caller: OperationCaller,
  name: "getTrainingSubscriptionResult" | "getNasSubscriptionResult",
  key: string,
  mapping: SubscriptionResultMapping,
): Promise<SubscriptionResult> {
  try {
    return await caller.request(name, { params: { key } }, subscriptionResultSchema(key, mapping));
  } catch (err) {
    if (err instanceof ServiceMalformedResponseError && err.enveloped) {
      throw new ServiceResultShapeError(err.message, {
        endpoint: name,
        code: err.code,
        enveloped: true,
        cause: err,
      });
    }
    throw err;
  }
}
