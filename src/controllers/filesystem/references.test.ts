import { describe, expect, it } from "vitest";
import { cciInstanceCrd } from "../../crds/cciinstance.js";
import type { FileSystem } from "../../crds/filesystem.js";
import type { ReferenceReader } from "../managed/call.js";
import { mountTargetResolver } from "./references.js";

/** A reader over CciInstances by name (name → instance id, undefined: not bound). */
function reader(ccis: Record<string, string | undefined>): ReferenceReader {
  const objects = Object.entries(ccis).map(([name, instanceId]) => ({
    metadata: { name },
    status: instanceId === undefined ? {} : { instanceId },
  }));
  return {
    bound: false,
    get: <O>(res: { kind: string }, name: string) =>
      (res.kind === cciInstanceCrd.kind
        ? objects.find((o) => o.metadata.name === name)
        : undefined) as O | undefined,
    list: <O>(res: { kind: string }) => (res.kind === cciInstanceCrd.kind ? objects : []) as O[],
  } as ReferenceReader;
}

const fs = (mounts: FileSystem["spec"]["mounts"]): FileSystem => ({
  apiVersion: "aidc.io/v1alpha1",
  kind: "FileSystem",
  metadata: { name: "shared", namespace: "team-a" },
  spec: { sizeGB: 10, deletionPolicy: "Orphan", mounts },
});

describe("mountTargetResolver", () => {
  const resolve = mountTargetResolver([]);

  it("resolves a cciInstanceRef to its instance id, and waits for a missing or unbound one", () => {
    const spec = fs([
      { name: "a", target: { cciInstanceRef: { name: "nb" } }, mountPath: "/mnt/a" },
    ]);
    expect(resolve(spec, reader({ nb: "cci-1" }))).toEqual({
      resolved: true,
      refs: { mounts: [{ name: "a", instanceId: "cci-1", mountPath: "/mnt/a" }] },
    });
    expect(resolve(spec, reader({}))).toMatchObject({
      resolved: false,
      reason: "MountTargetNotFound",
    });
    expect(resolve(spec, reader({ nb: undefined }))).toMatchObject({
      resolved: false,
      reason: "MountTargetNotBound",
    });
  });

  it("refuses two entries that name one instance", () => {
    const spec = fs([
      { name: "a", target: { cciInstanceRef: { name: "nb" } } },
      { name: "b", target: { instanceId: "cci-1" } },
    ]);
    expect(resolve(spec, reader({ nb: "cci-1" }))).toMatchObject({
      resolved: false,
      reason: "MountTargetsCollide",
    });
  });

  it("takes a raw instanceId only where a CciInstance of the namespace is bound to it, or the namespace may adopt", () => {
    const spec = fs([{ name: "a", target: { instanceId: "cci-2" } }]);
    const refused = resolve(spec, reader({ nb: "cci-1" }));
    expect(refused).toMatchObject({ resolved: false, reason: "AdoptionRefused" });
    expect(refused.resolved ? "" : refused.message).toContain("mounts[].target.instanceId cci-2");
    expect(resolve(spec, reader({ nb: "cci-2" }))).toMatchObject({ resolved: true });
    expect(mountTargetResolver(["team-a"])(spec, reader({}))).toMatchObject({ resolved: true });
    expect(mountTargetResolver(["*"])(spec, reader({}))).toMatchObject({ resolved: true });
  });
});
