import { describe, expect, it } from "vitest";
import {
  type CacheReader,
  InformerCache,
  LAST_APPLIED_ANNOTATION,
  referrersByIndex,
} from "./cache.js";
import type { KubeClient } from "./kube.js";
import type { ListerWatcher } from "./listwatch.js";
import type { KubeObject, ResourceDescriptor } from "./resource.js";

type Lean = (obj: KubeObject) => KubeObject;

const widgets: ResourceDescriptor = {
  group: "example.com",
  version: "v1",
  plural: "widgets",
  kind: "Widget",
  namespaced: true,
};
const parts: ResourceDescriptor = { ...widgets, plural: "parts", kind: "Part" };
const labelled: ResourceDescriptor = { ...parts, labelSelector: "example.com/owned" };

describe("InformerCache watchSelector", () => {
  it("adds its selector to the lists and watches of the kinds it names, and keeps the cache ids", async () => {
    const listed: (string | undefined)[] = [];
    const cache = new InformerCache({} as KubeClient, {
      watchSelector: (res) => (res.kind === "Widget" ? "shard=a" : undefined),
      listerWatcher: (res): ListerWatcher => ({
        list: async () => {
          listed.push(`${res.plural}:${res.labelSelector ?? ""}`);
          return { items: [], resourceVersion: "1" };
        },
        watch: async () => ({ abort() {} }),
      }),
    });
    cache.informerFor(widgets);
    cache.informerFor(labelled);
    cache.informerFor({ ...widgets, labelSelector: "example.com/kept" });
    cache.start();
    await cache.waitForSync();
    await cache.stop();
    expect(listed.sort()).toEqual([
      "parts:example.com/owned",
      "widgets:example.com/kept,shard=a",
      "widgets:shard=a",
    ]);
    // Readers use the plain descriptor.
    expect(cache.list(widgets)).toEqual([]);
  });
});

describe("InformerCache's own list+watch", () => {
  it("makes each listed item lean as its page arrives, so a relist never holds the full items", async () => {
    const full = {
      metadata: {
        name: "a",
        namespace: "ns",
        managedFields: [{ manager: "kubectl" }],
        annotations: { [LAST_APPLIED_ANNOTATION]: "{}", kept: "yes" },
      },
    };
    const asListed: KubeObject[] = [];
    const kube = {
      list: async (_res: ResourceDescriptor, _ns: string, opts: { transform?: Lean }) => {
        const item = (opts.transform ?? ((o) => o))(structuredClone(full));
        asListed.push(item);
        return { items: [item], resourceVersion: "1" };
      },
      transport: {
        connections: { generation: () => 0, drop() {} },
        watch: async () => ({ abort() {} }),
      },
    } as unknown as KubeClient;
    const cache = new InformerCache(kube, { namespaces: ["ns"] });
    cache.informerFor(widgets);
    cache.start();
    await cache.waitForSync();
    await cache.stop();
    expect(asListed).toEqual([
      { metadata: { name: "a", namespace: "ns", annotations: { kept: "yes" } } },
    ]);
    expect(cache.get(widgets, "ns/a")?.metadata).toEqual(asListed[0]?.metadata);
  });
});

describe("referrersByIndex", () => {
  it("maps a changed object to the keys of the primaries whose index lists it as namespace/name", () => {
    const asked: string[] = [];
    const cache = {
      byIndex: (res: ResourceDescriptor, index: string, value: string) => {
        asked.push(`${res.kind} ${index} ${value}`);
        return value === "ns/p1"
          ? [
              { metadata: { namespace: "ns", name: "w1" } },
              { metadata: { namespace: "ns", name: "w2" } },
            ]
          : [];
      },
    } as unknown as CacheReader;
    const map = referrersByIndex(widgets, "byPart");
    expect(map({ metadata: { namespace: "ns", name: "p1" } }, cache)).toEqual([
      { namespace: "ns", name: "w1" },
      { namespace: "ns", name: "w2" },
    ]);
    expect(map({ metadata: { namespace: "ns", name: "p2" } }, cache)).toEqual([]);
    expect(asked).toEqual(["Widget byPart ns/p1", "Widget byPart ns/p2"]);
  });
});
