import { describe, expect, it } from "vitest";
import type { KubeObject } from "../../src/runtime/resource.js";
import { NAS, nasVolume } from "../bench/workload.js";
import type { ChaosObject } from "../chaos/deletes.js";
import { checkSteering, planSteering } from "../chaos/steering.js";
import { nasCreateCall } from "../support/request-log.js";

const objects = (): ChaosObject[] =>
  Array.from({ length: 40 }, (_, i) => ({ res: NAS, obj: nasVolume("ns", "st", i) }));

/** A create call carrying `name`, arrived at `at` (ms). */
const create = (name: string, at: number) => nasCreateCall(at, { name });

/** Every planned object resumed at `at`. */
const resumedAtEach = (plan: ReturnType<typeof planSteering>, at: number) =>
  new Map([...plan.values()].map((s) => [`${s.kind}/${s.name}`, at]));

describe("the chaos run's steering", () => {
  it("pauses a seeded share, half of it in the manifest it is created with", () => {
    const made = objects();
    const plan = planSteering(made, 0.5, 7);
    expect(plan).toEqual(planSteering(objects(), 0.5, 7));
    expect(plan.size).toBeGreaterThan(10);
    expect(plan.size).toBeLessThan(30);
    const fromCreation = [...plan].filter(([, s]) => s.fromCreation);
    expect(fromCreation.length).toBeGreaterThan(0);
    expect(fromCreation.length).toBeLessThan(plan.size);
    made.forEach(({ obj }, i) => {
      const paused = obj.metadata?.annotations?.["aidc.io/paused"];
      expect(paused).toBe(plan.get(i)?.fromCreation ? "true" : undefined);
    });
    expect(planSteering(objects(), 0, 7).size).toBe(0);
  });

  it("finds a create of an object paused from its creation sent before its resume, and a request not echoed", () => {
    const made = objects();
    const plan = planSteering(made, 0.5, 7);
    const [early, late] = [...plan.values()].filter((s) => s.fromCreation);
    const other = [...plan.values()].find((s) => !s.fromCreation);
    if (!early || !late || !other) throw new Error("seed 7 pauses too few");
    const resumedAt = Date.parse("2026-01-01T00:00:10Z");
    // One sent while paused; one after the resume; one of an object paused later (allowed).
    const log = [
      create(early.name, resumedAt - 1),
      create(late.name, resumedAt + 1),
      create(other.name, resumedAt - 5000),
      // A name that contains the early one's is not it.
      create(`${late.name}0`, resumedAt - 1),
    ];
    const left = (name: string, echoed?: string): KubeObject => ({
      kind: "NasVolume",
      metadata: { name },
      status: echoed ? { lastHandledReconcileAt: echoed } : {},
    });
    const findings = checkSteering(
      plan,
      log,
      resumedAtEach(plan, resumedAt),
      [left(early.name, "r1"), left(late.name, "r0"), left("not-steered")],
      "r1",
    );
    expect(findings.createdWhilePaused).toEqual([
      `NasVolume/${early.name}: subscribeNas at 2026-01-01T00:00:09.999Z`,
    ]);
    expect(findings.notEchoed).toEqual([`NasVolume/${late.name}`]);
    expect(findings.violations).toHaveLength(2);
  });

  it("measures each create against its own object's resume, sent one by one", () => {
    const plan = planSteering(objects(), 0.5, 7);
    const [first, second] = [...plan.values()].filter((s) => s.fromCreation);
    if (!first || !second) throw new Error("seed 7 pauses too few");
    const t = Date.parse("2026-01-01T00:00:10Z");
    const resumedAt = resumedAtEach(plan, t + 300);
    resumedAt.set(`NasVolume/${first.name}`, t);
    // The first's create follows its resume, while the second is still paused.
    const log = [create(first.name, t + 100), create(second.name, t + 100)];
    const findings = checkSteering(plan, log, resumedAt, [], "r1");
    expect(findings.createdWhilePaused).toEqual([
      `NasVolume/${second.name}: subscribeNas at 2026-01-01T00:00:10.100Z`,
    ]);
  });
});
