/**
 * The controller folder `npm run new-kind` writes (src/controllers/<kind>/): the
 * ExternalClient and controller.ts, declared with `managedController` (the decisions
 * and their tests are in decisions-templates.ts).
 */
import type { KindNames } from "./names.js";

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
import { ServiceNotFoundError } from "../../service/errors.js";
import { type Remote${n.kind}, ${n.kind}Operations } from "../../service/kinds/${n.lower}.js";
import type { OperationCaller } from "../../service/operation-caller.js";
import { type ListedIds, listIdentities, listRecords } from "../../service/pagination.js";
import {
  clientTokenInDescription,
  ownerMarkInDescription,
  withCreateMarkers,
} from "../../service/schemas/create.js";
import type {
  CreateResult,
  DeleteResult,
  ManagedCall,
  Observation,
  OwnerMark,
  ResolvedCall,
  SentCreate,
  UpdateResult,
} from "../managed/call.js";
import type { KindClient } from "../managed/external-client.js";
import { formatOwnerMark, ownerMark, parseOwnerMark } from "../managed/tenancy.js";
import { createRequest, readyOf, sizeChange } from "./decisions.js";

/**
 * The client of ${n.kind} for one account (\`connect\` in controller.ts): the four methods
 * of ExternalClient, and the opt-in parts it has (ownerOf, lookupByToken, listIds,
 * deleteConfigured; ../managed/external-client.ts lists the others).
 */
export class ${n.kind}ExternalClient implements KindClient<${n.kind}, Remote${n.kind}> {
  private readonly ops: ${n.kind}Operations;

  constructor(private readonly service: OperationCaller) {
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

  async lookupByToken(_call: ManagedCall<${n.kind}>, { token }: SentCreate): Promise<string[]> {
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
    return this.service.operationState("delete${n.kind}") !== "disabled";
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
import type { ControllerDefinition } from "../../runtime/controller.js";
import type { Remote${n.kind} } from "../../service/kinds/${n.lower}.js";
import type { ControllerDeps } from "../controller-factory.js";
import type { ManagedKind } from "../managed/external-client.js";
import { managedController, managedLoopOptions } from "../managed/managed-controller.js";
import { ${n.constant}_FACT_FIELDS, ${n.camel}Status } from "./decisions.js";
import { ${n.kind}ExternalClient } from "./external.js";

/** The finalizer of ${n.kind}s. */
export const ${n.constant}_FINALIZER = "aidc.io/${n.lower}";

/** Tunables beyond the operator config (tests shorten them). */
export interface ${n.kind}ControllerOptions {
  /** How long a new ${n.words} may be missing from the list after a create. */
  visibilityGraceMs?: number;
}

/**
 * The ${n.kind} controller, with \`options\` beyond the operator config (a
 * ControllerFactory: src/controllers/index.ts registers it).
 */
export function ${n.camel}Controller(
  deps: ControllerDeps,
  options: ${n.kind}ControllerOptions = {},
): ControllerDefinition {
  const kind: ManagedKind<${n.kind}, Remote${n.kind}> = {
    resource: ${n.camel}Crd,
    finalizer: ${n.constant}_FINALIZER,
    connect: (conn) => new ${n.kind}ExternalClient(conn.service),
    status: (obj, facts, remote) => ${n.camel}Status(obj, facts, remote),
    statusId: (obj) => obj.status?.${n.camel}Id,
    factFields: ${n.constant}_FACT_FIELDS,
  };
  return managedController(kind, {
    connections: deps.connections,
    loop: managedLoopOptions(deps.config, "${n.kind}", options.visibilityGraceMs),
  });
}
`;
}
