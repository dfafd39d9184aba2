/**
 * The custom ports of a task's pods against `spec.ports`, as a pure diff. `spec.ports`
 * absent means the operator does not manage ports (ports opened elsewhere stay); present
 * (even empty) it is the whole desired set of custom ports of every pod: missing ones
 * are opened, others closed, and a port open with another protocol is closed and opened
 * again. System ports are never touched; a desired port that is a system port is
 * already open and needs nothing.
 */
import type { TrainingJobPort } from "../../crds/trainingjob.js";
import type { PortProtocol } from "../../service/index.js";
import type { TrainingPodOperations } from "../../service/kinds/trainingjob.pods.js";
import { sendOrFindMade } from "../managed/refused-change.js";
import type { PodObservation } from "./remote.js";

/** One port change on one pod. */
export type PortAction =
  | { action: "close"; podName: string; port: number }
  | { action: "open"; podName: string; port: number; protocol: PortProtocol };

/**
 * The port changes that make every pod's custom ports equal `desired`; closes come
 * before opens (a re-open needs the close first). Pods whose ports could not be read
 * are left alone.
 */
export function portActions(
  desired: readonly TrainingJobPort[] | undefined,
  pods: readonly PodObservation[],
): PortAction[] {
  if (desired === undefined) return [];
  const want = new Map(desired.map((p) => [p.port, (p.protocol ?? "http") as PortProtocol]));
  const closes: PortAction[] = [];
  const opens: PortAction[] = [];
  for (const pod of [...pods].sort((a, b) => a.podName.localeCompare(b.podName))) {
    if (!pod.ports) continue;
    const system = new Set(pod.ports.ports.map((p) => p.port));
    const open = new Map(pod.ports.customPorts.map((p) => [p.port, p.protocol?.toLowerCase()]));
    for (const [port, protocol] of [...open].sort(([a], [b]) => a - b)) {
      const wanted = want.get(port);
      if (wanted === undefined || (protocol !== undefined && protocol !== wanted)) {
        closes.push({ action: "close", podName: pod.podName, port });
      }
    }
    for (const [port, protocol] of [...want].sort(([a], [b]) => a - b)) {
      if (system.has(port)) continue;
      const current = open.get(port);
      if (!open.has(port) || (current !== undefined && current !== protocol)) {
        opens.push({ action: "open", podName: pod.podName, port, protocol });
      }
    }
  }
  return [...closes, ...opens];
}

/** A human summary of port actions for events, e.g. `opened 8888/http on 2 pods`. */
export function describePortActions(actions: readonly PortAction[]): string {
  const groups = new Map<string, Set<string>>();
  for (const a of actions) {
    const label =
      a.action === "open" ? `opened port ${a.port}/${a.protocol}` : `closed port ${a.port}`;
    const pods = groups.get(label) ?? new Set<string>();
    pods.add(a.podName);
    groups.set(label, pods);
  }
  return [...groups]
    .map(([label, pods]) => `${label} on ${pods.size} pod${pods.size === 1 ? "" : "s"}`)
    .join(", ");
}

/**
 * Opens a port. A refusal (a 409 "already open": an earlier call whose answer was lost, or
 * someone else, opened it) reads the pod's ports again: the port found open with the
 * protocol asked counts as done, else the refusal stands (refused-change.ts).
 */
export async function openPort(
  pods: TrainingPodOperations,
  id: string,
  a: PortAction & { action: "open" },
): Promise<void> {
  await sendOrFindMade(
    () => pods.openPort(id, a.podName, { port: a.port, protocol: a.protocol }),
    async () => {
      const { customPorts } = await pods.openPorts(id, a.podName);
      const open = customPorts.find((p) => p.port === a.port);
      return open?.protocol?.toLowerCase() === a.protocol ? String(a.port) : undefined;
    },
  );
}
