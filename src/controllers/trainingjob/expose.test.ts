import { describe, expect, it } from "vitest";
import { AddressAllowList } from "../../config/cidr.js";
import type { TrainingPod } from "../../crds/trainingjob.js";
import {
  desiredEndpointSlice,
  desiredService,
  diffObjects,
  exposedPorts,
  serviceNameFor,
} from "./expose.js";
import { exposureChanges } from "./expose-sync.js";
import type { TrainingJobObject } from "./objects.js";

const job: TrainingJobObject = {
  apiVersion: "aidc.io/v1alpha1",
  kind: "TrainingJob",
  metadata: { name: "train", namespace: "ns", uid: "uid-1" },
  spec: { createType: "DIRECT", priority: 3, exposePorts: true, deletionPolicy: "Orphan" },
};
const pods: TrainingPod[] = [
  {
    name: "task-1-worker-0",
    ports: [
      { port: 22, custom: false, externalHost: "203.0.113.10", externalPort: 30001 },
      {
        port: 8888,
        protocol: "http",
        custom: true,
        externalHost: "203.0.113.10",
        externalPort: 30002,
      },
      { port: 9000, custom: true },
    ],
  },
];

describe("serviceNameFor", () => {
  const cases = [
    { reason: "a plain name is kept", job: "train" },
    { reason: "dots become dashes", job: "my.job" },
    { reason: "a name starting with a digit gets a letter", job: "1job" },
    { reason: "a long name is cut to 63 characters", job: "a".repeat(80) },
  ];
  for (const c of cases) {
    it(`makes a DNS-1035 label: ${c.reason}`, () => {
      const name = serviceNameFor(c.job, "pod-0", 8888);
      expect(name).toMatch(/^[a-z]([-a-z0-9]{0,61}[a-z0-9])?$/);
      expect(name.endsWith("-8888")).toBe(true);
    });
  }

  it("differs between pods of one job", () => {
    expect(serviceNameFor("j", "pod-0", 80)).not.toBe(serviceNameFor("j", "pod-1", 80));
  });
});

describe("exposedPorts and the desired objects", () => {
  it("exposes only custom ports that have an external address", () => {
    expect(exposedPorts("train", pods).map((p) => p.port)).toEqual([8888]);
  });

  it("builds a selector-less Service and an IPv4 EndpointSlice owned by the job", () => {
    const [e] = exposedPorts("train", pods);
    if (!e) throw new Error("no port");
    const svc = desiredService(job, e);
    expect(svc.spec).toEqual({
      type: "ClusterIP",
      ports: [{ name: "http", port: 8888, targetPort: 30002, protocol: "TCP" }],
    });
    expect(svc.metadata?.ownerReferences).toEqual([
      {
        apiVersion: "aidc.io/v1alpha1",
        kind: "TrainingJob",
        name: "train",
        uid: "uid-1",
        controller: true,
      },
    ]);
    const slice = desiredEndpointSlice(job, e);
    expect(slice.metadata?.labels?.["kubernetes.io/service-name"]).toBe(e.serviceName);
    expect(slice.addressType).toBe("IPv4");
    expect(slice.endpoints).toEqual([{ addresses: ["203.0.113.10"], conditions: { ready: true } }]);
    expect(slice.ports).toEqual([{ name: "http", port: 30002, protocol: "TCP" }]);
  });

  it("uses an FQDN slice for a host name", () => {
    const slice = desiredEndpointSlice(job, {
      serviceName: "s",
      podName: "p",
      port: 1,
      protocol: "http",
      externalHost: "gw.example.com",
      externalPort: 2,
    });
    expect(slice.addressType).toBe("FQDN");
  });
});

describe("diffObjects", () => {
  const a = { metadata: { name: "a", labels: { x: "1" } }, spec: { ports: [{ port: 1 }] } };
  const cases = [
    { reason: "a missing object is created", desired: [a], existing: [], want: ["create a"] },
    { reason: "an equal object needs nothing", desired: [a], existing: [a], want: [] },
    {
      reason: "fields the API server adds do not count",
      desired: [a],
      existing: [
        {
          ...a,
          metadata: { ...a.metadata, uid: "u" },
          spec: { clusterIP: "10.0.0.1", ports: [{ port: 1 }] },
        },
      ],
      want: [],
    },
    {
      reason: "labels are compared as a map: the API server returns them sorted",
      desired: [{ ...a, metadata: { name: "a", labels: { z: "1", a: "2" } } }],
      existing: [{ ...a, metadata: { name: "a", labels: { a: "2", z: "1" } } }],
      want: [],
    },
    {
      reason: "a label someone else added does not count",
      desired: [a],
      existing: [{ ...a, metadata: { name: "a", labels: { x: "1", team: "ml" } } }],
      want: [],
    },
    {
      reason: "a changed label is updated",
      desired: [a],
      existing: [{ ...a, metadata: { name: "a", labels: { x: "2" } } }],
      want: ["update a"],
    },
    {
      reason: "port fields are compared as values, in any key order",
      desired: [{ ...a, spec: { ports: [{ name: "http", port: 1, protocol: "TCP" }] } }],
      existing: [{ ...a, spec: { ports: [{ protocol: "TCP", port: 1, name: "http" }] } }],
      want: [],
    },
    {
      reason: "a changed port is updated",
      desired: [a],
      existing: [{ ...a, spec: { ports: [{ port: 2 }] } }],
      want: ["update a"],
    },
    {
      reason: "an object no longer desired is deleted",
      desired: [],
      existing: [a],
      want: ["delete a"],
    },
  ];
  for (const c of cases) {
    it(c.reason, () => {
      expect(
        diffObjects(c.desired, c.existing).map(
          (ch) => `${ch.op} ${ch.op === "delete" ? ch.name : ch.object.metadata?.name}`,
        ),
      ).toEqual(c.want);
    });
  }
});

describe("exposureChanges and the allowed address ranges", () => {
  const podAt = (name: string, externalHost: string) => ({
    name,
    ports: [{ port: 8888, custom: true, externalHost, externalPort: 30001 }],
  });
  const gateway = new AddressAllowList(["203.0.113.0/24", "2001:db8::/32"]);

  it.each([
    { reason: "a pod network address", host: "10.244.1.5" },
    { reason: "loopback", host: "127.0.0.1" },
    { reason: "the cloud metadata address", host: "169.254.169.254" },
    { reason: "a hostname (the spec says an IP)", host: "kubernetes.default.svc" },
    { reason: "an IPv6 address outside the range", host: "fd00::1" },
  ])("refuses $reason and makes nothing for it", ({ host }) => {
    const c = exposureChanges(job, [podAt("p0", host)], { services: [], slices: [] }, gateway);
    expect(c.services).toEqual([]);
    expect(c.slices).toEqual([]);
    expect(c.refused).toEqual([`p0:8888 at ${JSON.stringify(host)}`]);
  });

  it("exposes an address inside a range, beside a refused one", () => {
    const c = exposureChanges(
      job,
      [podAt("p0", "203.0.113.10"), podAt("p1", "10.0.0.1"), podAt("p2", "2001:db8::5")],
      { services: [], slices: [] },
      gateway,
    );
    expect(c.slices.map((s) => (s.op === "create" ? s.object.endpoints : undefined))).toEqual([
      [{ addresses: ["203.0.113.10"], conditions: { ready: true } }],
      [{ addresses: ["2001:db8::5"], conditions: { ready: true } }],
    ]);
    expect(c.refused).toEqual(['p1:8888 at "10.0.0.1"']);
  });

  it("refuses every address by default (no range configured)", () => {
    const c = exposureChanges(
      job,
      [podAt("p0", "203.0.113.10")],
      { services: [], slices: [] },
      new AddressAllowList([]),
    );
    expect(c.refused).toHaveLength(1);
  });
});
