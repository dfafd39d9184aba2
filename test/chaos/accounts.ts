/**
 * A second account under chaos: the emulator gets a second account (its own key and
 * world), the cluster a ServiceConnection to it (its key in a Secret of the run's
 * namespace, which the operator reads as connections.secretNamespace), and a seeded
 * share of the NasVolumes, TrainingJobs and TrainingTemplates names it in
 * `spec.connectionRef`. checks.ts then counts each object's resource in its own account
 * and reports any in the other one.
 */
import { randomBytes } from "node:crypto";
import type { RunningEmulator } from "../../src/emulator/server.js";
import { type EmulatorState, seededRandom } from "../../src/emulator/state.js";
import type { KubeClient } from "../../src/runtime/kube.js";
import { JOB, NAS, TPL } from "../bench/workload.js";
import { createConnection } from "../support/two-teams.js";
import type { ChaosObject } from "./deletes.js";

/** The second account of a run and the objects (`Kind/name`) that live in it. */
export interface SecondAccount {
  /** The ServiceConnection's name (cluster-scoped). */
  connection: string;
  state: EmulatorState;
  objects: Set<string>;
}

/** The kinds a share of which moves to the second account (none refers to an instance). */
const MOVABLE = new Set([NAS.kind, JOB.kind, TPL.kind]);

/**
 * Adds the account `second` to the emulator and a connection `<namespace>-second` to it,
 * and moves `share` of the movable `objects` to it (seeded by `seed`, a stream of its
 * own). Observed NasVolumes stay: their NAS is in the default account.
 */
export async function secondAccount(
  kube: KubeClient,
  emulator: RunningEmulator,
  namespace: string,
  objects: ChaosObject[],
  share: number,
  seed: number,
): Promise<SecondAccount> {
  const apiKey = randomBytes(24).toString("hex");
  const { state } = emulator.tenants.set("second", apiKey);
  const connection = `${namespace}-second`;
  await createConnection(kube, {
    secret: { namespace, name: "second-account-key" },
    apiKey,
    name: connection,
    baseUrl: emulator.url,
    allowed: namespace,
    allowInsecureHttp: true,
  });
  const random = seededRandom(seed * 104_729 + 31);
  const moved = new Set<string>();
  for (const { res, obj, remoteName } of objects) {
    if (random() >= share || !MOVABLE.has(res.kind) || remoteName !== undefined) continue;
    (obj.spec as Record<string, unknown>).connectionRef = { name: connection };
    moved.add(`${res.kind}/${obj.metadata?.name}`);
  }
  return { connection, state, objects: moved };
}
