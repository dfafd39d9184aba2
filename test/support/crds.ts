import * as k8s from "@kubernetes/client-node";
import { allCrds, crdManifest } from "../../src/crds/index.js";
import { eventually } from "./kube.js";

/** Field manager of the test installs; the chart and kubectl use their own. */
const FIELD_MANAGER = "aidc-operator-tests";

/**
 * Installs every CRD of the operator (the same objects `npm run generate` writes) by
 * server-side apply, so that it is idempotent and safe when several test files install
 * them, and waits until each is Established. Returns the CRD names.
 */
export async function installCrds(kc: k8s.KubeConfig): Promise<string[]> {
  const objects = k8s.KubernetesObjectApi.makeApiClient(kc);
  const ext = kc.makeApiClient(k8s.ApiextensionsV1Api);
  const names: string[] = [];
  for (const def of allCrds) {
    const manifest = crdManifest(def);
    await objects.patch(
      manifest as unknown as k8s.KubernetesObject,
      undefined,
      undefined,
      FIELD_MANAGER,
      true,
      k8s.PatchStrategy.ServerSideApply,
    );
    names.push(manifest.metadata.name);
  }
  for (const name of names) {
    await eventually(async () => {
      const crd = await ext.readCustomResourceDefinition({ name });
      return crd.status?.conditions?.some((c) => c.type === "Established" && c.status === "True");
    }, 30_000);
  }
  return names;
}
