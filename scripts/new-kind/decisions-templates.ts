/**
 * The pure decisions `npm run new-kind` writes (src/controllers/<kind>/decisions.ts)
 * and their table tests (decisions.test.ts).
 */
import type { KindNames } from "./names.js";

/** The content of src/controllers/<lower>/decisions.ts. */
export function decisionsModule(n: KindNames): string {
  return `/**
 * The ${n.kind} decisions, pure so that they are tested without a service or a cluster
 * (decisions.test.ts): the create request, the Ready condition a remote status implies,
 * the change an update makes, and the status. TODO(${n.kind}): fit them to the service.
 */
import type { ${n.kind}, ${n.kind}Phase, ${n.kind}Status } from "../../crds/${n.lower}.js";
import { ${n.constant}_REASONS } from "../../crds/${n.lower}.js";
import type { Create${n.kind}Request, Remote${n.kind} } from "../../service/kinds/${n.lower}.js";
import type { ManagedFacts, ReadyState, UpdateResult } from "../managed/call.js";

/** The name of the ${n.words} in the service: spec.name, else metadata.name. */
export function ${n.camel}Name(obj: ${n.kind}): string {
  return obj.spec.name ?? obj.metadata.name ?? "";
}

/** The create request of \`obj\`, its description carrying \`markers\` (token and owner). */
export function createRequest(obj: ${n.kind}, description: string): Create${n.kind}Request {
  return { name: ${n.camel}Name(obj), description, sizeGB: obj.spec.sizeGB };
}

/** The phase a remote status means. */
export function ${n.camel}Phase(remoteStatus: string): ${n.kind}Phase {
  switch (remoteStatus) {
    case "creating":
      return "Creating";
    case "available":
      return "Ready";
    case "error":
      return "Failed";
    default:
      return "Unknown";
  }
}

/** The Ready condition a remote record implies. */
export function readyOf(remote: Remote${n.kind}): ReadyState {
  const phase = ${n.camel}Phase(remote.status);
  if (phase === "Ready") {
    return { status: "True", reason: "Available", message: \`${n.words} \${remote.id} is available\` };
  }
  return {
    status: "False",
    reason: "Unavailable",
    message: \`${n.words} \${remote.id} is \${remote.status}\`,
  };
}

/** The change the spec asks of \`remote\`, or undefined when none. */
export function sizeChange(
  obj: ${n.kind},
  remote: Remote${n.kind},
): { toGB: number } | { refused: UpdateResult } | undefined {
  const want = obj.spec.sizeGB;
  if (want === remote.sizeGB) return undefined;
  if (want < remote.sizeGB) {
    return {
      refused: {
        outcome: "Refused",
        reason: ${n.constant}_REASONS.names.${n.kind}ShrinkRefused,
        message: \`sizeGB \${want} is below the ${n.words}'s \${remote.sizeGB} GB; the service cannot shrink it\`,
      },
    };
  }
  return { toGB: want };
}

/** The status fields that come from the facts (the loop keeps the others: managed/reconciler.ts). */
export const ${n.constant}_FACT_FIELDS = ["phase", "${n.camel}Id"] as const;

/**
 * The ${n.kind} status (without conditions) from the facts and the remote record;
 * without a remote record, only {@link ${n.constant}_FACT_FIELDS} (the loop keeps the
 * previous remote fields).
 */
export function ${n.camel}Status(
  obj: ${n.kind},
  facts: ManagedFacts,
  remote: Remote${n.kind} | undefined,
): ${n.kind}Status {
  const out: ${n.kind}Status = remote
    ? {
        phase: ${n.camel}Phase(remote.status),
        remoteStatus: remote.status,
        name: remote.name,
        sizeGB: remote.sizeGB,
        ...(remote.createdTime ? { createdTime: remote.createdTime } : {}),
      }
    : { phase: obj.status?.phase ?? (facts.externalId ? "Creating" : "Pending") };
  if (facts.externalId) out.${n.camel}Id = facts.externalId;
  return out;
}
`;
}

/** The content of src/controllers/<lower>/decisions.test.ts. */
export function decisionsTest(n: KindNames): string {
  return `import { describe, expect, it } from "vitest";
import type { ${n.kind} } from "../../crds/${n.lower}.js";
import type { Remote${n.kind} } from "../../service/kinds/${n.lower}.js";
import { createRequest, readyOf, sizeChange, ${n.camel}Name, ${n.camel}Status } from "./decisions.js";

function object(spec: Partial<${n.kind}["spec"]> = {}): ${n.kind} {
  return {
    apiVersion: "aidc.io/v1alpha1",
    kind: "${n.kind}",
    metadata: { name: "data", namespace: "team" },
    spec: { sizeGB: 10, deletionPolicy: "Orphan", ...spec },
  };
}

const remote = (fields: Partial<Remote${n.kind}> = {}): Remote${n.kind} => ({
  id: "x-1",
  name: "data",
  sizeGB: 10,
  status: "available",
  ...fields,
});

describe("the ${n.kind} decisions", () => {
  it("name the ${n.words} after spec.name, else the object", () => {
    expect(${n.camel}Name(object())).toBe("data");
    expect(${n.camel}Name(object({ name: "other" }))).toBe("other");
    expect(createRequest(object(), "d")).toEqual({ name: "data", description: "d", sizeGB: 10 });
  });

  it("are Ready only for an available ${n.words}", () => {
    expect(readyOf(remote())).toMatchObject({ status: "True", reason: "Available" });
    expect(readyOf(remote({ status: "creating" }))).toMatchObject({
      status: "False",
      reason: "Unavailable",
    });
  });

  it("grow a ${n.words} and refuse to shrink one", () => {
    expect(sizeChange(object(), remote())).toBeUndefined();
    expect(sizeChange(object({ sizeGB: 20 }), remote())).toEqual({ toGB: 20 });
    expect(sizeChange(object({ sizeGB: 5 }), remote())).toMatchObject({
      refused: { outcome: "Refused", reason: "${n.kind}ShrinkRefused" },
    });
  });

  it("mirror the remote record into the status, and keep the phase when nothing was observed", () => {
    const seen = ${n.camel}Status(object(), { externalId: "x-1" }, remote());
    expect(seen).toEqual({
      phase: "Ready",
      remoteStatus: "available",
      name: "data",
      sizeGB: 10,
      ${n.camel}Id: "x-1",
    });
    // Nothing observed: the fact fields alone (the loop keeps the remote ones).
    const kept = ${n.camel}Status({ ...object(), status: seen }, { externalId: "x-1" }, undefined);
    expect(kept).toEqual({ phase: "Ready", ${n.camel}Id: "x-1" });
    expect(${n.camel}Status(object(), {}, undefined)).toEqual({ phase: "Pending" });
  });
});
`;
}
