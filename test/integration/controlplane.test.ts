import * as k8s from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  adminKubeConfig,
  createNamespace,
  eventually,
  impersonatingKubeConfig,
} from "../support/kube.js";

const group = "smoke.aidc.io";
const plural = "widgets";
const crd: k8s.V1CustomResourceDefinition = {
  apiVersion: "apiextensions.k8s.io/v1",
  kind: "CustomResourceDefinition",
  metadata: { name: `${plural}.${group}` },
  spec: {
    group,
    scope: "Namespaced",
    names: { plural, singular: "widget", kind: "Widget" },
    versions: [
      {
        name: "v1",
        served: true,
        storage: true,
        subresources: { status: {} },
        schema: {
          openAPIV3Schema: {
            type: "object",
            properties: {
              spec: { type: "object", properties: { size: { type: "integer" } } },
              status: { type: "object", properties: { phase: { type: "string" } } },
            },
          },
        },
      },
    ],
  },
};

describe("the local control plane", () => {
  const kc = adminKubeConfig();
  const custom = kc.makeApiClient(k8s.CustomObjectsApi);
  let namespace = "";

  beforeAll(async () => {
    const ext = kc.makeApiClient(k8s.ApiextensionsV1Api);
    await ext.createCustomResourceDefinition({ body: crd });
    await eventually(async () => {
      const got = await ext.readCustomResourceDefinition({ name: crd.metadata?.name ?? "" });
      return got.status?.conditions?.some((c) => c.type === "Established" && c.status === "True");
    });
    namespace = await createNamespace(kc, "smoke");
  });

  afterAll(async () => {
    await kc
      .makeApiClient(k8s.ApiextensionsV1Api)
      .deleteCustomResourceDefinition({ name: crd.metadata?.name ?? "" });
  });

  it("reports a v1.37 kube-apiserver", async () => {
    const info = await kc.makeApiClient(k8s.VersionApi).getCode();
    expect(info.gitVersion).toMatch(/^v1\.37\./);
  });

  it("creates, reads and patches a custom object", async () => {
    await custom.createNamespacedCustomObject({
      group,
      version: "v1",
      namespace,
      plural,
      body: {
        apiVersion: `${group}/v1`,
        kind: "Widget",
        metadata: { name: "w1" },
        spec: { size: 1 },
      },
    });
    const read = (await custom.getNamespacedCustomObject({
      group,
      version: "v1",
      namespace,
      plural,
      name: "w1",
    })) as { spec: { size: number } };
    expect(read.spec.size).toBe(1);
    const patched = (await custom.patchNamespacedCustomObject(
      { group, version: "v1", namespace, plural, name: "w1", body: { spec: { size: 2 } } },
      k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch),
    )) as { spec: { size: number } };
    expect(patched.spec.size).toBe(2);
  });

  it("writes status only through the status subresource", async () => {
    await custom.createNamespacedCustomObject({
      group,
      version: "v1",
      namespace,
      plural,
      body: {
        apiVersion: `${group}/v1`,
        kind: "Widget",
        metadata: { name: "w2" },
        spec: { size: 1 },
      },
    });
    // A status change on the main resource is ignored when the subresource is on.
    const main = (await custom.patchNamespacedCustomObject(
      {
        group,
        version: "v1",
        namespace,
        plural,
        name: "w2",
        body: { status: { phase: "Ignored" } },
      },
      k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch),
    )) as { status?: { phase?: string } };
    expect(main.status?.phase).toBeUndefined();
    const viaStatus = (await custom.patchNamespacedCustomObjectStatus(
      { group, version: "v1", namespace, plural, name: "w2", body: { status: { phase: "Ready" } } },
      k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch),
    )) as { status?: { phase?: string } };
    expect(viaStatus.status?.phase).toBe("Ready");
  });

  it("refuses a service account without rights with 403 (RBAC is on)", async () => {
    const core = kc.makeApiClient(k8s.CoreV1Api);
    await core.createNamespacedServiceAccount({
      namespace,
      body: { metadata: { name: "nobody" } },
    });
    const asNobody = impersonatingKubeConfig(`system:serviceaccount:${namespace}:nobody`);
    const err = await asNobody
      .makeApiClient(k8s.CoreV1Api)
      .listNamespacedConfigMap({ namespace })
      .then(() => undefined)
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(k8s.ApiException);
    expect((err as k8s.ApiException<unknown>).code).toBe(403);
  });

  it("delivers a watch event for a new object", async () => {
    const watch = new k8s.Watch(kc);
    const seen: string[] = [];
    const req = await watch.watch(
      `/api/v1/namespaces/${namespace}/configmaps`,
      {},
      (type, obj: k8s.V1ConfigMap) => seen.push(`${type} ${obj.metadata?.name}`),
      () => undefined,
    );
    try {
      await kc
        .makeApiClient(k8s.CoreV1Api)
        .createNamespacedConfigMap({ namespace, body: { metadata: { name: "watched" } } });
      await eventually(async () => seen.includes("ADDED watched"), 10_000);
    } finally {
      req.abort();
    }
    expect(seen).toContain("ADDED watched");
  });
});
