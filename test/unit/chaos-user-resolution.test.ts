import { describe, expect, it } from "vitest";
import { ANNOTATIONS, formatPending } from "../../src/controllers/managed/decisions.js";
import type { KubeObject } from "../../src/runtime/resource.js";
import { NAS, TPL } from "../bench/workload.js";
import { type UserResolutions, unresolvedStop } from "../chaos/user-resolution.js";

/** An object stopped as CreateOutcomeUnknown on the create carrying `token`. */
function stoppedOn(kind: string, token: string, spec: object = {}): KubeObject {
  return {
    kind,
    metadata: {
      name: "x",
      annotations: {
        [ANNOTATIONS.createPending]: formatPending({ token, at: "", generation: 1 }),
      },
    },
    spec,
    status: {
      conditions: [
        {
          type: "Synced",
          reason: "CreateOutcomeUnknown",
          message: `no remote resource with its client token "${token}" was listed`,
        },
      ],
    },
  };
}

describe("the chaos run's user resolving CreateOutcomeUnknown", () => {
  it("resolves a create sent again that stopped again, once per pending create", () => {
    const done: UserResolutions = { adopted: [], createdAgain: [] };
    const first = unresolvedStop(NAS, stoppedOn("NasVolume", "t1"), done);
    expect(first).toMatchObject({ key: "NasVolume/x", token: "t1", create: "create t1" });
    done.createdAgain.push(`NasVolume/x create t1: its create reached the service 1 time(s)`);
    // Until the new create's status is written, the condition still names the old token.
    expect(unresolvedStop(NAS, stoppedOn("NasVolume", "t1"), done)).toBeUndefined();
    // The create sent again was lost too: its own stop is the user's again.
    expect(unresolvedStop(NAS, stoppedOn("NasVolume", "t2"), done)).toMatchObject({
      token: "t2",
      create: "create t2",
    });
  });

  it("looks a template up by its name, and takes a stale condition for the one resolved", () => {
    const done: UserResolutions = { adopted: [], createdAgain: [] };
    const tpl = (token: string, age: number) => {
      const obj = stoppedOn("TrainingTemplate", token, { name: "tpl-1" });
      const message = `a create was sent ${age} s ago; no template named "tpl-1" was listed`;
      (obj.status as { conditions: object[] }).conditions = [
        { type: "Synced", reason: "CreateOutcomeUnknown", message },
      ];
      return obj;
    };
    const first = unresolvedStop(TPL, tpl("t1", 31), done);
    expect(first).toMatchObject({ token: "tpl-1", create: "create t1" });
    done.createdAgain.push(`TrainingTemplate/x create t1: never; ${first?.message}`);
    expect(unresolvedStop(TPL, tpl("t1", 31), done)).toBeUndefined();
    // The new create is pending, its status not written yet: the condition is the old one.
    expect(unresolvedStop(TPL, tpl("t2", 31), done)).toBeUndefined();
    // The new create stopped too.
    expect(unresolvedStop(TPL, tpl("t2", 30), done)).toMatchObject({ create: "create t2" });
  });
});
