import { afterAll, describe, expect, it } from "vitest";
import { operatorConfigSchema } from "../../config/schema.js";
import { blockVolumeCrd } from "../../crds/blockvolume.js";
import { cciInstanceCrd } from "../../crds/cciinstance.js";
import { fileSystemCrd } from "../../crds/filesystem.js";
import type { CacheReader } from "../../runtime/cache.js";
import type { ControllerDefinition } from "../../runtime/controller.js";
import { createLogger } from "../../runtime/logging.js";
import {
  formatKey,
  type KubeObject,
  keyOf,
  type ResourceDescriptor,
} from "../../runtime/resource.js";
import { ServiceClient } from "../../service/client.js";
import { ServiceConnections } from "../connections/registry.js";
import { cciInstanceController } from "./controller.js";

/**
 * Which CciInstances a change of a BlockVolume or FileSystem queues: those whose
 * attachedStorage it changes, not every CciInstance of the namespace.
 */

const service = new ServiceClient({
  baseUrl: "http://127.0.0.1:9",
  apiKey: () => "unit-test-key",
  rateLimit: null,
});
afterAll(() => service.close());

const definition: ControllerDefinition = cciInstanceController({
  config: operatorConfigSchema.parse({ service: { baseUrl: "https://aidc.invalid" } }),
  connections: new ServiceConnections({ defaultClient: service, newClient: () => service }),
  log: createLogger({ level: "silent" }),
});

/** A cache of `objects` with the definition's indexes. */
function cacheOf(objects: KubeObject[]): CacheReader {
  const kindOf = (res: ResourceDescriptor) => objects.filter((o) => o.kind === res.kind);
  return {
    get: (res: ResourceDescriptor, key: { namespace: string; name: string }) =>
      kindOf(res).find((o) => formatKey(keyOf(o)) === formatKey(key)),
    list: (res: ResourceDescriptor, ns?: string) =>
      kindOf(res).filter((o) => ns === undefined || o.metadata?.namespace === ns),
    byIndex: (res: ResourceDescriptor, name: string, value: string) => {
      const spec = definition.indexes.find((i) => i.resource === res && i.name === name);
      if (!spec) throw new Error(`no index ${name}`);
      return kindOf(res).filter((o) => spec.fn(o).includes(value));
    },
  } as unknown as CacheReader;
}

/** The keys the runner queues for a change from `old` to `now` (now in the cache). */
function queued(others: KubeObject[], now: KubeObject | undefined, old?: KubeObject): string[] {
  const changed = now ?? old;
  if (!changed) throw new Error("a change has a state");
  const watch = definition.watches.find((w) => w.resource.kind === changed.kind);
  if (!watch) throw new Error(`${changed.kind} is not watched`);
  const cache = cacheOf(now ? [...others, now] : others);
  const states = [now, old].filter((s): s is KubeObject => s !== undefined);
  return [...new Set(states.flatMap((s) => watch.map(s, cache).map(formatKey)))].sort();
}

const cci = (name: string, instanceId: string, attachedStorage?: unknown[], ns = "team") =>
  ({
    apiVersion: `${cciInstanceCrd.group}/${cciInstanceCrd.version}`,
    kind: cciInstanceCrd.kind,
    metadata: { name, namespace: ns },
    spec: { instanceId },
    status: { instanceId, ...(attachedStorage ? { attachedStorage } : {}) },
  }) as KubeObject;

const volume = (status: Record<string, unknown>) =>
  ({
    kind: blockVolumeCrd.kind,
    metadata: { name: "data", namespace: "team" },
    status: { volumeId: "vol-1", ...status },
  }) as KubeObject;

const shown = { kind: "BlockVolume", name: "data", id: "vol-1", state: "Attached" };
const instances = [cci("a", "i-a"), cci("b", "i-b"), cci("c", "i-c"), cci("x", "i-a", [], "other")];

describe("CciInstance watches of attached storage", () => {
  it("queues only the CciInstance of the instance a volume is attached to", () => {
    const attached = volume({ attachedInstanceId: "i-a", phase: "Attached" });
    const before = volume({ phase: "Available" });
    expect(queued(instances, attached, before)).toEqual(["team/a"]);
  });

  it("queues the CciInstance a volume was detached from (only its old state names it)", () => {
    const withIt = [cci("a", "i-a", [shown]), cci("b", "i-b")];
    const detached = volume({ phase: "Available" });
    const before = volume({ attachedInstanceId: "i-a", phase: "Attached" });
    expect(queued(withIt, detached, before)).toEqual(["team/a"]);
    expect(queued(withIt, undefined, before)).toEqual(["team/a"]);
  });

  it("queues nothing for a change that does not alter what the instance shows", () => {
    const withIt = [cci("a", "i-a", [shown]), cci("b", "i-b")];
    const before = volume({ attachedInstanceId: "i-a", phase: "Attached" });
    const now = volume({ attachedInstanceId: "i-a", phase: "Attached", conditions: [] });
    expect(queued(withIt, now, before)).toEqual([]);
  });

  it("queues the CciInstance whose mount changed, not the one of another mount", () => {
    const fs = (states: [string, string][]) =>
      ({
        kind: fileSystemCrd.kind,
        metadata: { name: "shared", namespace: "team" },
        status: {
          mounts: states.map(([instanceId, state]) => ({ name: instanceId, instanceId, state })),
        },
      }) as KubeObject;
    const mounted = { kind: "FileSystem", name: "shared", state: "Mounted" };
    const withMounts = [cci("a", "i-a", [mounted]), cci("b", "i-b", [mounted]), cci("c", "i-c")];
    const before = fs([
      ["i-a", "Mounted"],
      ["i-b", "Mounted"],
    ]);
    const now = fs([
      ["i-a", "Mounted"],
      ["i-b", "Unmounting"],
    ]);
    expect(queued(withMounts, now, before)).toEqual(["team/b"]);
  });

  it("finds a CciInstance by the id it records before its status shows one", () => {
    const recorded = {
      ...cci("a", "i-a"),
      metadata: { name: "a", namespace: "team", annotations: { "aidc.io/external-id": "i-n" } },
      spec: { name: "by-name" },
      status: {},
    } as KubeObject;
    const attached = volume({ attachedInstanceId: "i-n", phase: "Attached" });
    expect(queued([recorded, cci("b", "i-b")], attached, volume({}))).toEqual(["team/a"]);
  });
});
