/**
 * The objects refused for a product code their connection's catalog lacks
 * (`UnknownProductRefused`, `ProductNotFoundRefused`), and the watch that tries them
 * again when a product of their code appears in the mirror: the refusal holds them
 * until something changes, and the product they name appearing is that change
 * (productCode is immutable, so their spec cannot).
 */
import { NAS_VOLUME_REASONS } from "../../crds/nasvolume.js";
import { TRAINING_JOB_REASONS } from "../../crds/trainingjob.js";
import type { MapToKeys } from "../../runtime/controller.js";
import type { KubeObject, ResourceDescriptor } from "../../runtime/resource.js";
import type { ServiceConnections } from "../connections/registry.js";
import type { ReferenceWatch } from "../managed/managed-controller.js";

/** The condition reasons of an object refused for a product code its catalog lacks. */
export const UNKNOWN_PRODUCT_REASONS: ReadonlySet<string> = new Set<string>([
  TRAINING_JOB_REASONS.names.UnknownProductRefused,
  NAS_VOLUME_REASONS.names.ProductNotFoundRefused,
]);

/** Whether `obj` is refused for its product code (a condition with such a reason). */
function refusedForProduct(obj: KubeObject): boolean {
  const status = obj.status as { conditions?: { reason?: string }[] } | undefined;
  return status?.conditions?.some((c) => UNKNOWN_PRODUCT_REASONS.has(c.reason ?? "")) ?? false;
}

/**
 * The watch of `product` (a catalog kind) by the controller of `own`: a product, once
 * mirrored, reconciles the objects of `own` refused for a product that use its
 * connection and name its code (or inherit one: a TrainingJob from its template).
 */
export function productAppearedWatch(
  connections: Pick<ServiceConnections, "chosenName">,
  own: ResourceDescriptor,
  product: ResourceDescriptor,
): ReferenceWatch {
  const map: MapToKeys = (obj, cache) => {
    // spec.connection is absent on the default connection's products.
    const { productCode: code, connection } = (obj.spec ?? {}) as {
      productCode?: string;
      connection?: string;
    };
    return cache
      .list(own)
      .filter((o) => {
        const asked = (o.spec as { productCode?: string } | undefined)?.productCode;
        return (
          refusedForProduct(o) &&
          (asked === undefined || asked === code) &&
          connections.chosenName(o) === connection
        );
      })
      .map((o) => ({ namespace: o.metadata?.namespace ?? "", name: o.metadata?.name ?? "" }));
  };
  return { resource: product, map };
}
