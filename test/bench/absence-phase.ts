/**
 * The cost of one absence proof of a TrainingJob's lost create (`absence` in the report
 * of `npm run bench`; --only-absence prints it alone): the service calls of the complete
 * task-list walks that prove a create's token absent before it is sent again
 * (`ABSENT_LISTINGS_FOR_GONE` of them), with N tasks listed, on a task list that carries
 * `env` and on one that leaves it to the detail (the emulator's `listsOmitEnv`: a detail
 * read per task, its env kept for the next walks of the account), and a second proof on
 * that list (another create's, the envs kept). Counted in the emulator's request log,
 * through the client the operator uses; an in-process emulator of its own, no control
 * plane.
 */
import { ABSENT_LISTINGS_FOR_GONE } from "../../src/controllers/managed/gone-evidence.js";
import { startEmulatedService } from "../../src/emulator/harness.js";
import type { ServiceClient } from "../../src/service/client.js";
import { CLIENT_TOKEN_ENV } from "../../src/service/schemas/create.js";

/** The task counts measured. */
export const ABSENCE_TASK_COUNTS = [10, 100, 1000];

/** One task count's figures: service calls per proof with and without env in the list. */
export interface AbsenceProofCost {
  tasks: number;
  callsWithEnv: number;
  callsWithoutEnv: number;
  /** A second proof without env in the list, on the same account. */
  callsWithoutEnvAgain: number;
  /** callsWithoutEnv / callsWithEnv. */
  ratio: number;
}

/** Measures one proof per task count and list shape. */
export async function runAbsencePhase(
  progress: (line: string) => void,
  counts: readonly number[] = ABSENCE_TASK_COUNTS,
): Promise<{ walksPerProof: number; proofs: AbsenceProofCost[] }> {
  const svc = await startEmulatedService();
  const { emulator } = svc;
  /** The calls of one proof, through `client`, of a token no task carries. */
  const proofCalls = async (client: ServiceClient, listsOmitEnv: boolean): Promise<number> => {
    emulator.state.behaviour.listsOmitEnv = listsOmitEnv;
    const before = emulator.requestLog.lastSeq();
    for (let walk = 0; walk < ABSENT_LISTINGS_FOR_GONE; walk++) {
      if ((await client.provesTrainingTaskTokenAbsent("never-sent")) !== true) {
        throw new Error("a walk of the task list did not prove the token absent");
      }
    }
    return emulator.requestLog.lastSeq() - before;
  };
  try {
    const proofs: AbsenceProofCost[] = [];
    for (const tasks of counts) {
      emulator.state.reset();
      await svc.admin.seed({
        tasks: Array.from({ length: tasks }, (_, i) => ({
          name: `job-${i}`,
          env: { [CLIENT_TOKEN_ENV]: `token-${i}` },
        })),
      });
      // An account of its own per count (the emulator's ids restart with the reset).
      const client = svc.newClient();
      const callsWithEnv = await proofCalls(client, false);
      const callsWithoutEnv = await proofCalls(client, true);
      const callsWithoutEnvAgain = await proofCalls(client, true);
      const ratio = Math.round((callsWithoutEnv / callsWithEnv) * 10) / 10;
      proofs.push({ tasks, callsWithEnv, callsWithoutEnv, callsWithoutEnvAgain, ratio });
      progress(
        `absence proof, ${tasks} tasks: ${callsWithEnv} calls; without env ${callsWithoutEnv}, then ${callsWithoutEnvAgain}`,
      );
    }
    return { walksPerProof: ABSENT_LISTINGS_FOR_GONE, proofs };
  } finally {
    await svc.stop();
  }
}
