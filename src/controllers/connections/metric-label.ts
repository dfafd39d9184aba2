/**
 * The `connection` label of an object in the object-health metrics
 * (`aidc_managed_resources`): the ServiceConnection it uses, by the same choice the
 * calls follow (resolution.ts), or the default connection's label. A name that no
 * ServiceConnection has becomes {@link MISSING_CONNECTION_LABEL}, so that the label
 * takes as many values as there are connections, whatever users write.
 */
import { serviceConnectionCrd } from "../../crds/serviceconnection.js";
import type { CacheReader } from "../../runtime/cache.js";
import type { KubeObject } from "../../runtime/resource.js";
import { DEFAULT_CONNECTION_LABEL } from "../../runtime/service-metrics.js";
import type { ServiceConnections } from "./registry.js";

/** The label of objects that name a ServiceConnection that does not exist. */
export const MISSING_CONNECTION_LABEL = "_missing";

/**
 * The label function: a ServiceConnection is labelled with its own name; any other
 * object with the name of the connection it uses when that exists in `cache`.
 */
export function connectionMetricLabel(
  connections: Pick<ServiceConnections, "chosenName">,
  cache: CacheReader,
): (obj: KubeObject) => string {
  const exists = (name: string) => {
    try {
      return cache.get(serviceConnectionCrd, name) !== undefined;
    } catch {
      return false;
    }
  };
  return (obj) => {
    if (obj.kind === serviceConnectionCrd.kind)
      return obj.metadata?.name ?? MISSING_CONNECTION_LABEL;
    const name = connections.chosenName(obj);
    if (name === undefined) return DEFAULT_CONNECTION_LABEL;
    return exists(name) ? name : MISSING_CONNECTION_LABEL;
  };
}
