/**
 * The cost of one absence proof of a TrainingJob's lost create (`absence` in the report
 * of `npm run bench`; --only-absence prints it alone): the service calls of the complete
 * task-list walks that prove a create's token absent before it is sent again
 * (`ABSENT_LISTINGS_FOR_GONE` of them), with N tasks listed, on a task list that carries
 * `env` and on one that leaves it to the detail (the emulator's `listsOmitEnv`: a detail
 * read per task per walk). Counted in the emulator's request log, through the client
 * the operator uses; an in-process emulator of its own, no control plane.
 */
import { ABSENT_LISTINGS_FOR_GONE } from "../../src/controllers/managed/gone-evidence.js";
import { startEmulatedService } from "../../src/emulator/harness.js";
import { CLIENT_TOKEN_ENV } from "../../src/service/schemas/create.js";

/** The task counts measured. */
export const ABSENCE_TASK_COUNTS = [10, 100, 1000];

/** One task count's figures: service calls per proof with and without env in the list. */
export interface AbsenceProofCost {
  tasks: number;
  callsWithEnv: number;
  callsWithoutEnv: number;
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
  /** The calls of one proof of a token no task carries. */
  const proofCalls = async (listsOmitEnv: boolean): Promise<number> => {
    emulator.state.behaviour.listsOmitEnv = listsOmitEnv;
    const before = emulator.requestLog.lastSeq();
    for (let walk = 0; walk < ABSENT_LISTINGS_FOR_GONE; walk++) {
      if ((await svc.client.provesTrainingTaskTokenAbsent("never-sent")) !== true) {
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
      const callsWithEnv = await proofCalls(false);
      const callsWithoutEnv = await proofCalls(true);
      const ratio = Math.round((callsWithoutEnv / callsWithEnv) * 10) / 10;
      proofs.push({ tasks, callsWithEnv, callsWithoutEnv, ratio });
      progress(
        `absence proof, ${tasks} tasks: ${callsWithEnv} calls, ${callsWithoutEnv} without env`,
      );
    }
    return { walksPerProof: ABSENT_LISTINGS_FOR_GONE, proofs };
  } finally {
    await svc.stop();
  }
}
