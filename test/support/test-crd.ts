import * as k8s from "@kubernetes/client-node";
import type { ResourceDescriptor } from "../../src/runtime/resource.js";
import { eventually } from "./kube.js";

/**
 * A test-only namespaced kind (`Gizmo`, group runtime.test.aidc.io) with a status
 * subresource, for runtime tests that must not depend on the operator's real CRDs.
 */
export const GIZMOS: ResourceDescriptor = {
  group: "runtime.test.aidc.io",
  version: "v1",
  plural: "gizmos",
  kind: "Gizmo",
  namespaced: true,
};

const crd: k8s.V1CustomResourceDefinition = {
  apiVersion: "apiextensions.k8s.io/v1",
  kind: "CustomResourceDefinition",
  metadata: { name: `${GIZMOS.plural}.${GIZMOS.group}` },
  spec: {
    group: GIZMOS.group,
    scope: "Namespaced",
    names: { plural: GIZMOS.plural, singular: "gizmo", kind: GIZMOS.kind },
    versions: [
      {
        name: GIZMOS.version,
        served: true,
        storage: true,
        subresources: { status: {} },
        schema: {
          openAPIV3Schema: {
            type: "object",
            properties: {
              spec: { type: "object", x_kubernetes_preserve_unknown_fields: true },
              status: { type: "object", x_kubernetes_preserve_unknown_fields: true },
            },
          },
        },
      },
    ],
  },
};

/** Creates the Gizmo CRD if needed and waits until it is served. */
export async function installGizmoCrd(kc: k8s.KubeConfig): Promise<void> {
  const ext = kc.makeApiClient(k8s.ApiextensionsV1Api);
  const name = crd.metadata?.name ?? "";
  try {
    await ext.createCustomResourceDefinition({ body: crd });
  } catch (err) {
    if ((err as { code?: number }).code !== 409) throw err;
  }
  await eventually(async () => {
    const got = await ext.readCustomResourceDefinition({ name });
    return got.status?.conditions?.some((c) => c.type === "Established" && c.status === "True");
  });
  // Established can precede the first successful list by a moment.
  const custom = kc.makeApiClient(k8s.CustomObjectsApi);
  await eventually(async () => {
    await custom.listClusterCustomObject({
      group: GIZMOS.group,
      version: GIZMOS.version,
      plural: GIZMOS.plural,
    });
    return true;
  });
}

/** A Gizmo manifest. */
export function gizmo(namespace: string, name: string, spec: Record<string, unknown> = {}) {
  return {
    apiVersion: `${GIZMOS.group}/${GIZMOS.version}`,
    kind: GIZMOS.kind,
    metadata: { name, namespace },
    spec,
  };
}
