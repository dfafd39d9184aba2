import { describe, expect, it } from "vitest";
import type { FileSystem } from "../../service/index.js";
import { mountsSettled, planMounts } from "./mounts.js";

const fs = (mounts: FileSystem["mounts"], status = "available"): FileSystem => ({
  id: "fs-1",
  status,
  mounts,
});

describe("planMounts", () => {
  it("makes a mount of the spec once the file system is available, and waits before", () => {
    const desired = [{ name: "a", instanceId: "cci-1", mountPath: "/mnt/a" }];
    const early = planMounts({
      desired,
      remote: fs([], "creating"),
      recorded: [],
      removalPossible: true,
    });
    expect(early.create).toEqual([]);
    expect(early.statuses).toMatchObject([{ name: "a", state: "Pending" }]);
    const now = planMounts({ desired, remote: fs([]), recorded: [], removalPossible: true });
    expect(now.create).toEqual(desired);
    expect(mountsSettled(now)).toBe(false);
  });

  it("takes a remote mount on the spec's instance for the object's (a lost create is not sent again)", () => {
    const plan = planMounts({
      desired: [{ name: "a", instanceId: "cci-1" }],
      remote: fs([
        { id: "mnt-9", instanceId: "cci-1", status: "mounted", address: "10.0.0.1:/fs-1" },
      ]),
      recorded: [],
      removalPossible: true,
    });
    expect(plan.create).toEqual([]);
    expect(plan.statuses).toEqual([
      {
        name: "a",
        state: "Mounted",
        mountId: "mnt-9",
        instanceId: "cci-1",
        address: "10.0.0.1:/fs-1",
        remoteState: "mounted",
      },
    ]);
    expect(plan.summary).toBe("1/1");
    expect(plan.unmounted).toEqual([]);
    expect(mountsSettled(plan)).toBe(true);
  });

  it("removes a recorded mount that left the spec, and never one it did not make", () => {
    const plan = planMounts({
      desired: [],
      remote: fs([
        { id: "mnt-1", instanceId: "cci-1", status: "mounted" },
        { id: "mnt-2", instanceId: "cci-2", status: "mounted" },
      ]),
      recorded: [{ name: "a", state: "Mounted", mountId: "mnt-1", instanceId: "cci-1" }],
      removalPossible: true,
    });
    expect(plan.remove).toEqual([{ name: "a", mountId: "mnt-1", instanceId: "cci-1" }]);
    expect(plan.others).toEqual([{ mountId: "mnt-2", instanceId: "cci-2" }]);
    expect(plan.summary).toBe("0/0");
  });

  it("reports a removal the service cannot do instead of sending it", () => {
    const plan = planMounts({
      desired: [],
      remote: fs([{ id: "mnt-1", instanceId: "cci-1", status: "mounted" }]),
      recorded: [{ name: "a", state: "Mounted", mountId: "mnt-1" }],
      removalPossible: false,
    });
    expect(plan.remove).toEqual([]);
    expect(plan.stuck).toEqual(["a"]);
    expect(plan.statuses[0]?.state).toBe("RemovalNotPossible");
    expect(mountsSettled(plan)).toBe(false);
  });

  it("mounts again at a changed path: removes first, then waits for the old mount to go", () => {
    const desired = [{ name: "a", instanceId: "cci-1", mountPath: "/mnt/new" }];
    const first = planMounts({
      desired,
      remote: fs([{ id: "mnt-1", instanceId: "cci-1", mountPath: "/mnt/old", status: "mounted" }]),
      recorded: [],
      removalPossible: true,
    });
    expect(first.remove).toEqual([{ name: "a", mountId: "mnt-1", instanceId: "cci-1" }]);
    expect(first.create).toEqual([]);
    // Not mounted as the spec asks until it is made again at the new path.
    expect(first.unmounted.map((m) => m.name)).toEqual(["a"]);
    expect(first.summary).toBe("0/1");
    const going = planMounts({
      desired,
      remote: fs([{ id: "mnt-1", instanceId: "cci-1", mountPath: "/mnt/old", status: "deleting" }]),
      recorded: [],
      removalPossible: true,
    });
    expect(going.create).toEqual([]);
    expect(going.transitional).toEqual(["a"]);
  });

  it("without Update, plans the same changes (the drift) but shows each as not sent", () => {
    const noUpdate = "spec.managementPolicies has no Update, so it is not changed";
    const plan = planMounts({
      desired: [
        { name: "new", instanceId: "cci-1" },
        { name: "moved", instanceId: "cci-2", mountPath: "/mnt/new" },
      ],
      remote: fs([
        { id: "mnt-2", instanceId: "cci-2", mountPath: "/mnt/old", status: "mounted" },
        { id: "mnt-3", instanceId: "cci-3", status: "mounted" },
      ]),
      recorded: [{ name: "gone", state: "Mounted", mountId: "mnt-3", instanceId: "cci-3" }],
      removalPossible: true,
      updates: false,
    });
    expect(plan.create).toEqual([{ name: "new", instanceId: "cci-1" }]);
    expect(plan.remove.map((r) => r.mountId)).toEqual(["mnt-2", "mnt-3"]);
    expect(plan.unmounted.map((m) => m.name)).toEqual(["new", "moved"]);
    expect(mountsSettled(plan)).toBe(false);
    expect(plan.statuses).toMatchObject([
      { name: "new", state: "Pending", message: `not mounted; ${noUpdate}` },
      {
        name: "moved",
        state: "Mounted",
        message: `mounted at /mnt/old; spec asks for /mnt/new; ${noUpdate}`,
      },
      { name: "gone", state: "Mounted", message: `removed from the spec; ${noUpdate}` },
    ]);
  });
});
