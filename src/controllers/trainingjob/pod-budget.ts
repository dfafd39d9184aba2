/**
 * The budget of a TrainingJob's status.pods: a job may have up to 1024 workers and the
 * service decides how much it says about each, so each pod's lists are bounded and the
 * pods' details are kept while they fit in {@link PODS_BUDGET_CHARS}; a pod beyond
 * keeps its name and open ports (what exposure and spec.exportTo read) when those fit,
 * else its name alone. Pure.
 */
import type { TrainingPod } from "../../crds/trainingjob.js";

/** How many containers and volumes the status keeps per pod (podsWithinBudget bounds them all). */
export const MAX_POD_LIST = 32;
/**
 * How many open ports the status keeps per pod (system ports first, then custom ones;
 * a job opens at most 32 custom ports), and target ports per container.
 */
export const MAX_POD_PORTS = 64;

/** How many characters of JSON the pods' details may take in the status. */
export const PODS_BUDGET_CHARS = 512 * 1024;

/**
 * `pods` in order, each whole while the running total fits in `budget`, else reduced
 * to its name and ports, else to its name (names always stay: a pod is never dropped).
 */
export function podsWithinBudget(
  pods: readonly TrainingPod[],
  budget = PODS_BUDGET_CHARS,
): TrainingPod[] {
  let used = 0;
  return pods.map((pod) => {
    const reduced: TrainingPod[] = [
      pod,
      { name: pod.name, ...(pod.ports ? { ports: pod.ports } : {}) },
    ];
    for (const candidate of reduced) {
      const size = JSON.stringify(candidate).length;
      if (used + size <= budget) {
        used += size;
        return candidate;
      }
    }
    return { name: pod.name };
  });
}
