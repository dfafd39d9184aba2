import { describe, expect, it } from "vitest";
import { type CacheReader, InformerCache, referrersByIndex } from "./cache.js";
import type { KubeClient } from "./kube.js";
import type { ListerWatcher } from "./listwatch.js";
import type { ResourceDescriptor } from "./resource.js";

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
