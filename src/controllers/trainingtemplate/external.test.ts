import { describe, expect, it } from "vitest";
import type { TrainingTemplate } from "../../crds/trainingtemplate.js";
import type { AccountCalls } from "../../service/account.js";
import type { ResolvedCall } from "../managed/call.js";
import { formatOwnerMark, ownerMark } from "../managed/tenancy.js";
import {
  APPLIED_ANNOTATION,
  bodyHash,
  readApplied,
  templateDrift,
  templateInput,
  withOwnerInDesc,
} from "./decisions.js";
import { TemplateExternalClient } from "./external.js";
import type { TemplateRefs } from "./references.js";

const obj: TrainingTemplate = {
  apiVersion: "aidc.io/v1alpha1",
  kind: "TrainingTemplate",
  metadata: { name: "tpl", namespace: "ns" },
  spec: { deletionPolicy: "Orphan", trainingType: "HPC", image: "img" },
};

describe("a TrainingTemplate's create", () => {
  it("records its body with the pending marker, so nothing is written between the marker and the create call", async () => {
    const steps: string[] = [];
    const service = {
      templates: {
        create: async () => {
          steps.push("create");
        },
        iterate: async function* () {},
      },
    } as unknown as AccountCalls;
    const call = {
      obj,
      refs: { nasVolumes: new Map(), ownStorageIds: () => new Set() },
      now: () => new Date("2026-11-27T10:00:00Z"),
      annotate: async (a: Record<string, unknown>) => {
        steps.push(`annotate ${Object.keys(a).join(",")}`);
      },
    } as unknown as ResolvedCall<TrainingTemplate, TemplateRefs>;
    const tpl = new TemplateExternalClient(service);
    const input = templateInput(obj, () => undefined);
    if (!input.ok) throw new Error(input.message);
    const marked = tpl.pendingAnnotations(call);
    expect(readApplied(marked[APPLIED_ANNOTATION])).toMatchObject({ hash: bodyHash(input.input) });
    await tpl.create(call);
    expect(steps).toEqual(["create"]);
  });
});

describe("a TrainingTemplate's owner mark", () => {
  const tpl = new TemplateExternalClient({} as AccountCalls);
  const input = templateInput(obj, () => undefined);
  if (!input.ok) throw new Error(input.message);
  const mark = ownerMark("ns", "tpl");

  it("is sent in the description too, and read from it where the list shows no env", () => {
    const sent = withOwnerInDesc({ ...input.input, desc: "nightly" });
    expect(sent.desc).toBe(`nightly [aidc-owner:${formatOwnerMark(mark)}]`);
    expect(tpl.ownerOf({ id: "t1", desc: sent.desc })).toEqual(mark);
    expect(tpl.ownerOf({ id: "t1", env: sent.env })).toEqual(mark);
    // Neither env nor a marked description: the mark cannot be read.
    expect(tpl.ownerOf({ id: "t1", desc: "nightly" })).toEqual({ unread: "env" });
    // A description does not drift by its mark, nor by a marker the spec wrote itself.
    expect(templateDrift({ name: "tpl", desc: "nightly" }, { id: "t1", desc: sent.desc })).toEqual(
      [],
    );
    const forged = { ...input.input, desc: "nightly [aidc-owner:0000000000000000.0]" };
    expect(withOwnerInDesc(forged).desc).toBe(sent.desc);
    expect(templateDrift(forged, { id: "t1", desc: sent.desc })).toEqual([]);
  });
});

describe("a TrainingTemplate found by name", () => {
  const own = formatOwnerMark(ownerMark("ns", "tpl"));
  const other = formatOwnerMark(ownerMark("ns2", "tpl"));
  const lookup = (listed: { id: string; desc?: string }[]) => {
    const service = {
      isEndpointEnabled: () => true,
      templates: {
        iterate: async function* () {
          for (const t of listed) yield { name: "tpl", ...t };
        },
      },
    } as unknown as AccountCalls;
    const call = { obj } as unknown as ResolvedCall<TrainingTemplate, TemplateRefs>;
    return new TemplateExternalClient(service).lookupByToken(call);
  };

  it("is the one of several of its name that carries its own mark; else all of them", async () => {
    const mine = { id: "t2", desc: `[aidc-owner:${own}]` };
    const theirs = { id: "t3", desc: `[aidc-owner:${other}]` };
    expect(await lookup([{ id: "t1", desc: "by hand" }, mine, theirs])).toEqual(["t2"]);
    // Alone, it is found whatever its mark (the owner check then decides).
    expect(await lookup([theirs])).toEqual(["t3"]);
    // None or several with its mark: the lookup cannot tell, and names them all.
    expect(await lookup([{ id: "t1" }, theirs])).toEqual(["t1", "t3"]);
    expect(await lookup([mine, { ...mine, id: "t4" }])).toEqual(["t2", "t4"]);
  });
});
