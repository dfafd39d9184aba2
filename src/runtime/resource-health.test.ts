import { describe, expect, it } from "vitest";
import { RuntimeMetrics } from "./metrics.js";
import type { KubeObject, ResourceDescriptor } from "./resource.js";
import { type HealthCache, ResourceHealth, type ResourceHealthSource } from "./resource-health.js";

const WIDGETS: ResourceDescriptor = {
  group: "example.io",
  version: "v1",
  plural: "widgets",
  kind: "Widget",
  namespaced: true,
};
const GADGETS: ResourceDescriptor = { ...WIDGETS, plural: "gadgets", kind: "Gadget" };

/** The reason table of the tests. */
const STATES: Record<string, string> = {
  Available: "Ok",
  Creating: "UnderWay",
  InvalidSpec: "Terminal",
  Stopped: "Resting",
};

const T0 = Date.parse("2026-01-01T00:00:00Z");
const at = (s: number) => new Date(T0 + s * 1000).toISOString().replace(/\.000Z$/, "Z");

interface Cond {
  type: string;
  status: string;
  reason: string;
  since?: number;
}

function obj(name: string, conditions: Cond[], extra: Partial<KubeObject> = {}): KubeObject {
  return Object.freeze({
    kind: "Widget",
    metadata: { name, namespace: "ns", uid: `uid-${name}`, creationTimestamp: at(0) },
    status: {
      conditions: conditions.map((c) => ({
        type: c.type,
        status: c.status,
        reason: c.reason,
        message: "",
        lastTransitionTime: at(c.since ?? 0),
      })),
    },
    ...extra,
  });
}

const ready = (since = 0): Cond => ({ type: "Ready", status: "True", reason: "Available", since });
const creating = (since = 0): Cond => ({
  type: "Ready",
  status: "False",
  reason: "Creating",
  since,
});

/** A cache of fixed lists. */
class FakeCache implements HealthCache {
  readonly objects = new Map<string, KubeObject[]>();
  list(res: ResourceDescriptor): KubeObject[] {
    return this.objects.get(res.kind) ?? [];
  }
}

function setup(options: { active?: boolean; connectionOf?: (o: KubeObject) => string } = {}) {
  const cache = new FakeCache();
  let now = T0 + 600_000;
  const observed: [string, number][] = [];
  const source: ResourceHealthSource = {
    kinds: [WIDGETS, GADGETS],
    connectionOf: options.connectionOf ?? (() => "_default"),
    reasons: { stateOf: (r) => STATES[r] },
  };
  const health = new ResourceHealth(
    source,
    cache,
    { observeFirstReady: (kind, s) => observed.push([kind, s]) },
    () => now,
  );
  health.active = options.active ?? true;
  return {
    cache,
    health,
    observed,
    advance: (s: number) => {
      now += s * 1000;
    },
  };
}

describe("ResourceHealth", () => {
  it.each([
    {
      case: "Ready and Synced",
      conditions: [ready(), { type: "Synced", status: "True", reason: "Available" }],
      labels: { ready: "True", synced: "True", reason: "Available", state: "Ok" },
    },
    {
      case: "on its way: Ready's reason",
      conditions: [creating()],
      labels: { ready: "False", synced: "Unknown", reason: "Creating", state: "UnderWay" },
    },
    {
      case: "Synced False: Synced's reason",
      conditions: [ready(), { type: "Synced", status: "False", reason: "Creating" }],
      labels: { ready: "True", synced: "False", reason: "Creating", state: "UnderWay" },
    },
    {
      case: "stalled: Stalled's reason",
      conditions: [
        creating(),
        { type: "Synced", status: "False", reason: "Creating" },
        { type: "Stalled", status: "True", reason: "InvalidSpec" },
      ],
      labels: { ready: "False", synced: "False", reason: "InvalidSpec", state: "Terminal" },
    },
    {
      case: "a reason not in the table: Other",
      conditions: [{ type: "Ready", status: "False", reason: "SomethingElse" }],
      labels: { ready: "False", synced: "Unknown", reason: "Other", state: "Unknown" },
    },
    {
      case: "no condition yet: None, under way",
      conditions: [],
      labels: { ready: "Unknown", synced: "Unknown", reason: "None", state: "UnderWay" },
    },
  ])("labels an object $case", ({ conditions, labels }) => {
    const { cache, health } = setup();
    cache.objects.set("Widget", [obj("a", conditions)]);
    expect(health.snapshot().rows).toEqual([
      { labels: { kind: "Widget", connection: "_default", ...labels }, count: 1 },
    ]);
  });

  it("counts objects by kind, connection and health, and asks the connection at every scrape", () => {
    let team = "team-a";
    const { cache, health, advance } = setup({
      connectionOf: (o) => (o.metadata?.name === "c" ? team : "_default"),
    });
    cache.objects.set("Widget", [obj("a", [ready()]), obj("b", [ready()]), obj("c", [ready()])]);
    cache.objects.set("Gadget", [obj("d", [creating()])]);
    const rows = () =>
      health
        .snapshot()
        .rows.map((r) => `${r.labels.kind} ${r.labels.connection} ${r.labels.reason} ${r.count}`)
        .sort();
    expect(rows()).toEqual([
      "Gadget _default Creating 1",
      "Widget _default Available 2",
      "Widget team-a Available 1",
    ]);
    team = "team-b";
    advance(1);
    expect(rows()).toContain("Widget team-b Available 1");
  });

  it("gives per kind the wait of the longest-waiting object under way, not of stalled, resting or Ready ones", () => {
    const { cache, health } = setup();
    cache.objects.set("Widget", [
      obj("waits-since-100s", [creating(100)]),
      obj("waits-since-400s", [creating(400)]),
      obj("ready", [ready(0)]),
      obj("stopped", [{ type: "Ready", status: "False", reason: "Stopped" }]),
      obj("stalled", [creating(0), { type: "Stalled", status: "True", reason: "InvalidSpec" }]),
    ]);
    cache.objects.set("Gadget", [obj("ok", [ready()])]);
    const oldest = health.snapshot().oldestWaiting;
    expect(oldest.get("Widget")).toBe(500); // now is 600 s
    expect(oldest.get("Gadget")).toBe(0);
  });

  it("exports nothing while this process does not run the controllers (a follower)", () => {
    const { cache, health } = setup({ active: false });
    cache.objects.set("Widget", [obj("a", [ready()])]);
    expect(health.snapshot()).toEqual({ rows: [], oldestWaiting: new Map() });
  });

  /** Scrapes with the widgets `list` in the cache, 10 s after the last scrape. */
  function scrapes(t: ReturnType<typeof setup>, ...passes: KubeObject[][]) {
    for (const list of passes) {
      t.advance(10);
      t.cache.objects.set("Widget", list);
      t.health.snapshot();
    }
  }
  const created = (s: number) => ({
    metadata: { name: "a", namespace: "ns", uid: "uid-a", creationTimestamp: at(s) },
  });

  it("times create to first Ready once per object, from the Ready condition's transition time", () => {
    const t = setup();
    scrapes(
      t,
      [obj("a", [creating(0)])],
      [obj("a", [ready(42)])],
      [obj("a", [creating(50)])],
      [obj("a", [ready(60)])],
    );
    expect(t.observed).toEqual([["Widget", 42]]);
  });

  it("times an object created and Ready between two scrapes", () => {
    const t = setup(); // now: 600 s
    scrapes(t, [], [obj("a", [ready(618)], created(612))]);
    expect(t.observed).toEqual([["Widget", 6]]);
  });

  it.each([
    { case: "Ready when first seen (at start)", first: [ready(5)] },
    {
      case: "resting when first seen (a stopped instance started again)",
      first: [{ type: "Ready", status: "False", reason: "Stopped" }],
    },
  ])("does not time an object $case", ({ first }) => {
    const t = setup();
    scrapes(t, [obj("a", first)], [obj("a", [ready(615)])]);
    expect(t.observed).toEqual([]);
  });

  it("does not time an object that comes into the cache Ready since before the last scrape", () => {
    const t = setup();
    scrapes(t, [], [obj("a", [ready(605)])]);
    expect(t.observed).toEqual([]);
  });

  it("forgets an object deleted before it got Ready", () => {
    const t = setup();
    scrapes(t, [obj("a", [creating(0)])], [], [obj("a", [ready(5)])]);
    expect(t.observed).toEqual([]);
  });

  it("does not time first Readies on a follower, and times those after it became the leader", () => {
    const t = setup({ active: false });
    scrapes(t, [obj("a", [creating(0)])], [obj("a", [ready(615)])]);
    t.cache.objects.set("Gadget", [obj("b", [creating(0)])]);
    t.health.active = true; // at 620 s
    t.advance(10);
    t.cache.objects.set("Gadget", [obj("b", [ready(625)])]);
    t.health.snapshot();
    expect(t.observed).toEqual([["Gadget", 625]]);
  });
});

describe("RuntimeMetrics object health", () => {
  it("exports the snapshot as aidc_managed_resources and the oldest wait, and first Readies as a histogram", async () => {
    const metrics = new RuntimeMetrics({ processMetrics: false });
    metrics.exportResourceHealth(() => ({
      rows: [
        {
          labels: {
            kind: "Widget",
            connection: "_default",
            ready: "True",
            synced: "True",
            reason: "Available",
            state: "Ok",
          },
          count: 3,
        },
      ],
      oldestWaiting: new Map([["Widget", 12]]),
    }));
    metrics.observeFirstReady("Widget", 7);
    const text = await metrics.text();
    expect(text).toContain(
      'aidc_managed_resources{kind="Widget",connection="_default",ready="True",synced="True",reason="Available",state="Ok"} 3',
    );
    expect(text).toContain('aidc_managed_resources_oldest_waiting_seconds{kind="Widget"} 12');
    expect(text).toContain('aidc_resource_first_ready_seconds_bucket{le="10",kind="Widget"} 1');
  });

  it("serves a first Ready in the scrape whose pass found it", async () => {
    const metrics = new RuntimeMetrics({ processMetrics: false });
    const t = setup();
    const health = new ResourceHealth(
      { kinds: [WIDGETS], connectionOf: () => "_default", reasons: { stateOf: (r) => STATES[r] } },
      t.cache,
      metrics,
      () => T0 + 700_000,
    );
    health.active = true;
    metrics.exportResourceHealth(() => health.snapshot());
    t.cache.objects.set("Widget", [
      obj("a", [ready(699)], { metadata: { uid: "u", creationTimestamp: at(690) } }),
    ]);
    expect(await metrics.text()).toContain(
      'aidc_resource_first_ready_seconds_count{kind="Widget"} 1',
    );
  });

  it("drops the rows of objects that are gone at the next scrape", async () => {
    const metrics = new RuntimeMetrics({ processMetrics: false });
    let count = 1;
    metrics.exportResourceHealth(() => ({
      rows:
        count > 0
          ? [
              {
                labels: {
                  kind: "Widget",
                  connection: "_default",
                  ready: "False",
                  synced: "False",
                  reason: "Creating",
                  state: "UnderWay",
                },
                count,
              },
            ]
          : [],
      oldestWaiting: new Map(),
    }));
    expect(await metrics.text()).toContain('reason="Creating"');
    count = 0;
    expect(await metrics.text()).not.toContain('reason="Creating"');
  });
});
