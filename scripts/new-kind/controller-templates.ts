/**
 * The controller folder `npm run new-kind` writes (src/controllers/<kind>/): the pure
 * decisions and their tests, the ExternalClient, and controller.ts, declared with
 * `managedController`.
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
import type { ManagedFacts, ReadyState, UpdateResult } from "../managed/external-client.js";

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

/**
 * The ${n.kind} status (without conditions) from the facts and the remote record; the
 * remote fields of the previous status are kept when nothing was observed.
 */
export function ${n.camel}Status(
  obj: ${n.kind},
  facts: ManagedFacts,
  remote: Remote${n.kind} | undefined,
): ${n.kind}Status {
  const prev = obj.status ?? {};
  const out: ${n.kind}Status = remote
    ? {
        phase: ${n.camel}Phase(remote.status),
        remoteStatus: remote.status,
        name: remote.name,
        sizeGB: remote.sizeGB,
        ...(remote.createdTime ? { createdTime: remote.createdTime } : {}),
      }
    : {
        ...(prev.phase ? { phase: prev.phase } : {}),
        ...(prev.remoteStatus ? { remoteStatus: prev.remoteStatus } : {}),
        ...(prev.name ? { name: prev.name } : {}),
        ...(prev.sizeGB !== undefined ? { sizeGB: prev.sizeGB } : {}),
        ...(prev.createdTime ? { createdTime: prev.createdTime } : {}),
      };
  if (!remote && !out.phase) out.phase = facts.externalId ? "Creating" : "Pending";
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

  it("mirror the remote record into the status, and keep it when nothing was observed", () => {
    const seen = ${n.camel}Status(object(), { externalId: "x-1" }, remote());
    expect(seen).toEqual({
      phase: "Ready",
      remoteStatus: "available",
      name: "data",
      sizeGB: 10,
      ${n.camel}Id: "x-1",
    });
    expect(${n.camel}Status({ ...object(), status: seen }, { externalId: "x-1" }, undefined)).toEqual(
      seen,
    );
    expect(${n.camel}Status(object(), {}, undefined)).toEqual({ phase: "Pending" });
  });
});
`;
}

/** The content of src/controllers/<lower>/external.ts. */
export function externalModule(n: KindNames): string {
  return `/**
 * The ${n.kind}'s remote resource behind the generic managed loop (../managed): a
 * ${n.words} of the service, created at once (its id in the create's answer), found again
 * after an interrupted create by the client token in its description, grown when
 * sizeGB grows, deleted at once. TODO(${n.kind}): what the service really does (an
 * asynchronous create answers a subscription key: implement pollSubscription).
 */
import type { ${n.kind} } from "../../crds/${n.lower}.js";
import {
  clientTokenInDescription,
  ownerMarkInDescription,
  withCreateMarkers,
} from "../../service/client-token.js";
import { ServiceNotFoundError } from "../../service/errors.js";
import { type Remote${n.kind}, ${n.kind}Operations } from "../../service/kinds/${n.lower}.js";
import type { OperationCaller } from "../../service/operation-caller.js";
import { type ListedIds, listIdentities, listRecords } from "../../service/pagination.js";
import type {
  CreateResult,
  DeleteResult,
  ExternalClient,
  ManagedCall,
  Observation,
  ResolvedCall,
  UpdateResult,
} from "../managed/external-client.js";
import { formatOwnerMark, type OwnerMark, ownerMark, parseOwnerMark } from "../managed/tenancy.js";
import { createRequest, readyOf, sizeChange } from "./decisions.js";

/** What the service client must offer the ${n.kind} client. */
export interface ${n.kind}Service extends OperationCaller {
  isEndpointEnabled(name: "delete${n.kind}"): boolean;
}

/** The ExternalClient of ${n.kind}. */
export class ${n.kind}ExternalClient implements ExternalClient<${n.kind}, Remote${n.kind}> {
  private readonly ops: ${n.kind}Operations;

  constructor(private readonly service: ${n.kind}Service) {
    this.ops = new ${n.kind}Operations(service);
  }

  ownerOf(remote: Remote${n.kind}): OwnerMark | undefined {
    return parseOwnerMark(ownerMarkInDescription(remote.description));
  }

  async create({ obj }: ResolvedCall<${n.kind}>, token: string): Promise<CreateResult> {
    const owner = formatOwnerMark(ownerMark(obj.metadata.namespace ?? "", obj.metadata.name ?? ""));
    const description = withCreateMarkers(obj.spec.description, token, owner);
    return { externalId: await this.ops.create(createRequest(obj, description)) };
  }

  async lookupByToken(_call: ManagedCall<${n.kind}>, token: string): Promise<string[]> {
    const { records } = await listRecords(this.ops.iterate(), (r) => r.id);
    return [...records.values()]
      .filter((r) => clientTokenInDescription(r.description) === token)
      .map((r) => r.id);
  }

  listIds(): Promise<ListedIds> {
    return listIdentities(this.ops.iterate(), (r) => r.id);
  }

  async observe(call: ManagedCall<${n.kind}>, id: string): Promise<Observation<Remote${n.kind}>> {
    let remote: Remote${n.kind};
    try {
      remote = await this.ops.get(id);
    } catch (err) {
      if (err instanceof ServiceNotFoundError) return { exists: false };
      throw err;
    }
    const upToDate = sizeChange(call.obj, remote) === undefined;
    return { exists: true, upToDate, ready: readyOf(remote), remote };
  }

  async update(
    call: ManagedCall<${n.kind}>,
    id: string,
    remote: Remote${n.kind},
  ): Promise<UpdateResult> {
    const change = sizeChange(call.obj, remote);
    if (change === undefined) return { outcome: "Waiting", message: "nothing to change" };
    if ("refused" in change) return change.refused;
    await this.ops.resize(id, change.toGB);
    return { outcome: "Applied", message: \`resized to \${change.toGB} GB\` };
  }

  deleteConfigured(): boolean {
    return this.service.isEndpointEnabled("delete${n.kind}");
  }

  async delete(_call: ManagedCall<${n.kind}>, id: string): Promise<DeleteResult> {
    if (!this.deleteConfigured()) return "NotConfigured";
    await this.ops.delete(id);
    return "Deleted";
  }
}
`;
}

/** The content of src/controllers/<lower>/controller.ts. */
export function controllerModule(n: KindNames): string {
  return `/**
 * The ${n.kind} controller: the generic managed loop (../managed, declared with
 * \`managedController\`) with the ${n.kind} ExternalClient (external.ts) and status
 * (decisions.ts). TODO(${n.kind}): references to other kinds (\`resolveReferences\`,
 * \`references\`), steps before deletion (\`beforeDelete\` of the client).
 */
import { type ${n.kind}, ${n.camel}Crd } from "../../crds/${n.lower}.js";
import type { Remote${n.kind} } from "../../service/kinds/${n.lower}.js";
import type { ControllerFactory } from "../controller-factory.js";
import type { ManagedKind } from "../managed/external-client.js";
import { managedController, managedLoopOptions } from "../managed/managed-controller.js";
import { ${n.camel}Status } from "./decisions.js";
import { ${n.kind}ExternalClient } from "./external.js";

/** The finalizer of ${n.kind}s. */
export const ${n.constant}_FINALIZER = "aidc.io/${n.lower}";

/** Tunables beyond the operator config (tests shorten them). */
export interface ${n.kind}ControllerOptions {
  /** How long a new ${n.words} may be missing from the list after a create. */
  visibilityGraceMs?: number;
}

/** A ${n.kind} controller factory with \`options\`. */
export function ${n.camel}ControllerWith(options: ${n.kind}ControllerOptions = {}): ControllerFactory {
  return (deps) => {
    const kind: ManagedKind<${n.kind}, Remote${n.kind}> = {
      resource: ${n.camel}Crd,
      finalizer: ${n.constant}_FINALIZER,
      client: new ${n.kind}ExternalClient(deps.service),
      status: (obj, facts, remote) => ${n.camel}Status(obj, facts, remote),
      statusId: (obj) => obj.status?.${n.camel}Id,
    };
    return managedController(kind, {
      loop: managedLoopOptions(deps.config, "${n.kind}", options.visibilityGraceMs),
    });
  };
}

/** The ${n.kind} controller factory (registered in src/controllers/index.ts). */
export const ${n.camel}Controller: ControllerFactory = ${n.camel}ControllerWith();
`;
}
