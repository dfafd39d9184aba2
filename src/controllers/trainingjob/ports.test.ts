import { describe, expect, it } from "vitest";
import type { TrainingJobPort } from "../../crds/trainingjob.js";
import { describePortActions, type PortAction, portActions } from "./ports.js";
import type { PodObservation } from "./remote.js";

const host = { externalHost: "203.0.113.10", externalPort: 30000 };
function pod(name: string, custom: [number, string?][], system: number[] = [22]): PodObservation {
  return {
    podName: name,
    ports: {
      ports: system.map((port) => ({ port, ...host })),
      customPorts: custom.map(([port, protocol]) => ({
        port,
        ...(protocol ? { protocol } : {}),
        ...host,
      })),
    },
  };
}

describe("portActions", () => {
  const cases: {
    reason: string;
    desired: TrainingJobPort[] | undefined;
    pods: PodObservation[];
    want: PortAction[];
  }[] = [
    {
      reason: "without spec.ports the operator leaves ports alone",
      desired: undefined,
      pods: [pod("p0", [[8080, "http"]])],
      want: [],
    },
    {
      reason: "a desired port missing on each pod is opened on each",
      desired: [{ port: 8888, protocol: "http" }],
      pods: [pod("p1", []), pod("p0", [])],
      want: [
        { action: "open", podName: "p0", port: 8888, protocol: "http" },
        { action: "open", podName: "p1", port: 8888, protocol: "http" },
      ],
    },
    {
      reason: "a custom port no longer desired is closed",
      desired: [],
      pods: [pod("p0", [[8080, "http"]])],
      want: [{ action: "close", podName: "p0", port: 8080 }],
    },
    {
      reason: "an open port with the desired protocol needs nothing",
      desired: [{ port: 8080, protocol: "http" }],
      pods: [pod("p0", [[8080, "HTTP"]])],
      want: [],
    },
    {
      reason: "a protocol change closes then opens the port",
      desired: [{ port: 8080, protocol: "https" }],
      pods: [pod("p0", [[8080, "http"]])],
      want: [
        { action: "close", podName: "p0", port: 8080 },
        { action: "open", podName: "p0", port: 8080, protocol: "https" },
      ],
    },
    {
      reason: "a desired port that is a system port is already open",
      desired: [{ port: 22, protocol: "http" }],
      pods: [pod("p0", [])],
      want: [],
    },
    {
      reason: "a pod whose ports could not be read is left alone",
      desired: [{ port: 8888, protocol: "http" }],
      pods: [{ podName: "p0" }],
      want: [],
    },
  ];
  for (const c of cases) {
    it(c.reason, () => {
      expect(portActions(c.desired, c.pods)).toEqual(c.want);
    });
  }

  it("summarises actions per port for the Updated event", () => {
    expect(
      describePortActions([
        { action: "open", podName: "a", port: 1, protocol: "http" },
        { action: "open", podName: "b", port: 1, protocol: "http" },
        { action: "close", podName: "a", port: 2 },
      ]),
    ).toBe("opened port 1/http on 2 pods, closed port 2 on 1 pod");
  });
});
