import { describe, expect, it } from "vitest";
import { operatorConfigSchema } from "../../config/schema.js";
import { DEFAULT_CONNECTION_LABEL } from "../../runtime/metrics.js";
import type { KubeObject, ResourceDescriptor } from "../../runtime/resource.js";
import type { AccountCalls } from "../../service/account.js";
import { ServiceClient } from "../../service/client.js";
import type { ResolvedConnection } from "../connections/client.js";
import type { ConnectionSource } from "../connections/registry.js";
import type { ManagedObject } from "./call.js";
import { ANNOTATIONS } from "./decisions.js";
import type { KindClient, ManagedKind } from "./external-client.js";
import { managedController, managedLoopOptions, managedPermissions } from "./managed-controller.js";
import { managedSettled } from "./reconciler.js";
import { connector } from "./run.js";
import { BOUND_ID_INDEX } from "./tenancy.js";

/**
 * What `managedController` wires for a kind: its name, the loop's error policy and
 * settled judgement, the one-binder index before the kind's own, the watches of the
 * referenced kinds, and the rules in order (the loop's, reading the references other
 * than the kind itself, then the kind's extras).
 */

const resource = (kind: string, group = "test.io"): ResourceDescriptor => ({
  group,
  version: "v1",
  plural: `${kind.toLowerCase()}s`,
  kind,
  namespaced: true,
});
const WIDGET = resource("Widget");
const GADGET = resource("Gadget");
const SPROCKET = resource("Sprocket", "other.io");

const unused = () => Promise.reject(new Error("not called"));
const client: KindClient<ManagedObject, unknown> = {
  observe: unused,
  create: unused,
  lookupByToken: unused,
  update: unused,
  delete: unused,
};
const kind: ManagedKind<ManagedObject, unknown> = {
  resource: WIDGET,
  finalizer: "test.io/widget",
  connect: () => client,
  adoptId: (obj) => (obj.spec as { id?: string } | undefined)?.id,
  status: () => ({}),
};
const conn: ResolvedConnection = {
  name: undefined,
  label: DEFAULT_CONNECTION_LABEL,
  service: {} as ServiceClient,
  objectStorage: undefined,
};
const connections: ConnectionSource = { forObject: () => conn };
const toNothing = () => [];
const loop = { pollIntervalMs: 30_000 };

describe("managedController", () => {
  it("names the controller after its kind and uses the loop's error policy and settled judgement", () => {
    const def = managedController(kind, { loop, connections });
    expect(def.name).toBe("widget");
    expect(def.primary).toBe(WIDGET);
    expect(def.settled).toBe(managedSettled);
    expect(def.errorPolicy).toBeTypeOf("function");
    expect(def.watches).toEqual([]);
  });

  it("indexes the bound ids (annotation and spec id) first, then the kind's own indexes", () => {
    const own = (o: KubeObject) => [o.metadata?.name ?? ""];
    const def = managedController(kind, {
      loop,
      connections,
      indexes: [{ name: "byName", fn: own }],
    });
    expect(def.indexes.map((i) => [i.resource, i.name])).toEqual([
      [WIDGET, BOUND_ID_INDEX],
      [WIDGET, "byName"],
    ]);
    const obj = {
      metadata: { name: "w", annotations: { [ANNOTATIONS.externalId]: "id-1" } },
      spec: { id: "id-2" },
    } as KubeObject;
    expect(def.indexes[0]?.fn(obj)).toEqual(["id-1", "id-2"]);
  });

  it("watches each referenced kind and reads those other than its own, per API group, after the loop's rules", () => {
    const extra = {
      apiGroups: [""],
      resources: ["configmaps"],
      verbs: ["get"],
      reason: "an extra rule",
    };
    const def = managedController(kind, {
      loop,
      connections,
      references: {
        watches: [
          { resource: GADGET, map: toNothing },
          { resource: WIDGET, map: toNothing },
          { resource: SPROCKET, map: toNothing },
        ],
        reason: "read what a widget refers to",
      },
      permissions: [extra],
    });
    expect(def.watches.map((w) => w.resource)).toEqual([GADGET, WIDGET, SPROCKET]);
    expect(def.permissions).toEqual([
      ...managedPermissions(WIDGET),
      {
        apiGroups: ["test.io"],
        resources: ["gadgets"],
        verbs: ["get", "list", "watch"],
        reason: "read what a widget refers to",
      },
      {
        apiGroups: ["other.io"],
        resources: ["sprockets"],
        verbs: ["get", "list", "watch"],
        reason: "read what a widget refers to",
      },
      extra,
    ]);
  });

  it("declares only the loop's rules for a kind without references or extras", () => {
    expect(managedController(kind, { loop, connections }).permissions).toEqual(
      managedPermissions(WIDGET),
    );
  });
});

describe("managedLoopOptions", () => {
  const config = operatorConfigSchema.parse({
    service: { baseUrl: "https://aidc.invalid", listVisibilityWindowMs: 120_000, timeoutMs: 7_000 },
    pollIntervalMs: { Widget: 500 },
    adoption: { namespaces: ["team"] },
    reconcileTimeoutMs: 45_000,
  });

  it("takes the kind's poll interval, the list visibility window, the adoption namespaces, the lost-create switch and the timeouts", () => {
    expect(managedLoopOptions(config, "Widget")).toEqual({
      pollIntervalMs: 500,
      subscriptionPollMs: 500,
      visibilityGraceMs: 120_000,
      adoptionNamespaces: ["team"],
      recreateLostCreates: true,
      reconcileTimeoutMs: 45_000,
      requestTimeoutMs: 7_000,
    });
  });

  it("polls a subscription first after 1 s at most, and takes a given visibility window and request timeout", () => {
    expect(managedLoopOptions(config, "Gadget", 5, 3_000)).toMatchObject({
      pollIntervalMs: 30_000,
      subscriptionPollMs: 1_000,
      visibilityGraceMs: 5,
      requestTimeoutMs: 3_000,
    });
  });

  it("connects each object to its own connection's account, through a view for the reconcile's calls", () => {
    const client = (baseUrl: string) =>
      new ServiceClient({ baseUrl, apiKey: () => "k", rateLimit: null });
    const accounts = { a: client("https://a.invalid"), b: client("https://b.invalid") };
    const source: ConnectionSource = {
      forObject: (obj) => {
        const name = obj.metadata?.namespace === "team-b" ? "b" : "a";
        return { name, label: name, service: accounts[name], objectStorage: undefined };
      },
    };
    const made: AccountCalls[] = [];
    const connect = connector(
      {
        ...kind,
        connect: (conn) => {
          made.push(conn.service);
          return { ...kind.connect(conn) };
        },
      },
      source,
    );
    const obj = (namespace: string) => ({ metadata: { namespace, name: "x" }, spec: {} });
    const routine = { routine: true };
    const work = { routine: false, signal: new AbortController().signal };
    connect(obj("team-a"), routine);
    connect(obj("team-b"), work);
    connect(obj("team-a"), work);
    expect(made.map((s) => s.account)).toEqual([
      accounts.a.account,
      accounts.b.account,
      accounts.a.account,
    ]);
    expect(made.map((s) => s.context)).toEqual([routine, work, work]);
    // A view per reconcile; the account (rate limit, caches, snapshots) is shared.
    expect(made[0]).not.toBe(made[2]);
    expect(made[0]).not.toBe(accounts.a);
  });
});
