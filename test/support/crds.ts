import * as k8s from "@kubernetes/client-node";
import { allCrds, crdManifest } from "../../src/crds/index.js";
import { kubeRequest } from "./http.js";
import { eventually } from "./kube.js";

/** Field manager of the test installs; the chart and kubectl use their own. */
const FIELD_MANAGER = "aidc-operator-tests";

/**
 * Installs every CRD of the operator (the same objects `npm run generate` writes) by
 * server-side apply, so that it is idempotent and safe when several test files install
 * them, and waits until each is Established. Returns the CRD names.
 */
export async function installCrds(kc: k8s.KubeConfig): Promise<string[]> {
  const ext = kc.makeApiClient(k8s.ApiextensionsV1Api);
  const names: string[] = [];
  for (const def of allCrds) {
    const manifest = crdManifest(def);
    const name = manifest.metadata.name;
    // Raw, not through client-node's typed serializer, which would drop enums,
    // defaults and CEL rules (see kubeRequest).
    const res = await kubeRequest(
      kc,
      "PATCH",
      `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${name}?fieldManager=${FIELD_MANAGER}&force=true`,
      { body: manifest, contentType: "application/apply-patch+yaml" },
    );
    if (res.status !== 200 && res.status !== 201) {
      throw new Error(`applying CRD ${name} failed with ${res.status}: ${res.body}`);
    }
    names.push(name);
  }
  for (const name of names) {
    await eventually(async () => {
      const crd = await ext.readCustomResourceDefinition({ name });
      return crd.status?.conditions?.some((c) => c.type === "Established" && c.status === "True");
    }, 30_000);
  }
  return names;
}

/**
 * The status code and message of a request the API server refused (its Status
 * object's `message`, e.g. `... spec.image: Invalid value: ...`). Rethrows anything
 * that is not an API error.
 */
export function refusal(err: unknown): { code: number; message: string } {
  if (!(err instanceof k8s.ApiException)) throw err;
  const body: unknown = typeof err.body === "string" ? JSON.parse(err.body) : err.body;
  const message = (body as { message?: unknown } | undefined)?.message;
  return { code: err.code, message: String(message ?? "") };
}
