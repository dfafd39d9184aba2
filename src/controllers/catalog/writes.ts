/**
 * The catalog mirror's writes: the changes mirror.ts decides, sent to the API server,
 * and the resourceVersion of each write kept, so that its watch echo asks for nothing
 * ({@link ProductWrites.isOwnEcho}) while anyone else's change of a product does.
 */
import type { CatalogStatus } from "../../crds/catalog.js";
import { nasProductCrd } from "../../crds/nasproduct.js";
import { serviceConnectionCrd } from "../../crds/serviceconnection.js";
import { trainingProductCrd } from "../../crds/trainingproduct.js";
import type { KubeClient } from "../../runtime/kube.js";
import { isConflict, isNotFound } from "../../runtime/kube-errors.js";
import { apiVersionOf, type KubeObject } from "../../runtime/resource.js";
import { type DesiredProduct, mergePatch, mirrorChanges } from "./mirror.js";

/** The two catalog kinds. */
export const CATALOG_KINDS = [trainingProductCrd, nasProductCrd] as const;
/** One of {@link CATALOG_KINDS}. */
export type CatalogKind = (typeof CATALOG_KINDS)[number];

/** Sends the mirror's writes and remembers them. */
export class ProductWrites {
  /** The resourceVersion of each product as last written here. */
  private readonly written = new Map<string, string>();

  /** Whether `obj` is the echo of a write of this mirror. */
  isOwnEcho(obj: KubeObject): boolean {
    const { name = "", resourceVersion } = obj.metadata ?? {};
    return resourceVersion !== undefined && this.written.get(name) === resourceVersion;
  }

  /**
   * Writes what differs between `desired` and the cluster's `existing` objects of
   * `kind`; a ServiceConnection's products are owned by it (`owner`). Returns how many
   * writes it sent.
   */
  async apply(
    kube: KubeClient,
    kind: CatalogKind,
    owner: KubeObject | undefined,
    desired: readonly DesiredProduct[],
    existing: readonly KubeObject[],
  ): Promise<number> {
    const changes = mirrorChanges(desired, existing);
    const meta = owner?.metadata;
    const ownerReferences = meta
      ? [
          {
            apiVersion: apiVersionOf(serviceConnectionCrd),
            kind: serviceConnectionCrd.kind,
            name: meta.name,
            uid: meta.uid,
          },
        ]
      : undefined;
    for (const d of changes.create) {
      try {
        this.remember(
          await kube.create(kind, {
            apiVersion: apiVersionOf(kind),
            kind: kind.kind,
            metadata: {
              name: d.name,
              labels: d.labels,
              ...(ownerReferences ? { ownerReferences } : {}),
            },
            spec: d.spec,
          }),
        );
      } catch (err) {
        // The cache was behind: the object is there; the next look compares it.
        if (!isConflict(err)) throw err;
      }
    }
    for (const { desired: d, existing: o } of changes.update) {
      this.remember(
        await kube.patch(
          kind,
          { namespace: "", name: d.name },
          {
            metadata: { labels: d.labels, resourceVersion: o.metadata?.resourceVersion },
            spec: mergePatch(o.spec, d.spec),
          },
        ),
      );
    }
    for (const o of changes.remove) {
      const name = o.metadata?.name ?? "";
      this.written.delete(name);
      await kube.delete(kind, { namespace: "", name });
    }
    return changes.create.length + changes.update.length + changes.remove.length;
  }

  /** Echoes a handled reconcile-now `value` in the product's status; a product gone is skipped. */
  async echoRequest(kube: KubeClient, product: KubeObject, value: string): Promise<void> {
    const kind = product.kind === nasProductCrd.kind ? nasProductCrd : trainingProductCrd;
    const status: CatalogStatus = { lastHandledReconcileAt: value };
    try {
      this.remember(
        await kube.patchStatus(kind, { namespace: "", name: product.metadata?.name ?? "" }, status),
      );
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }

  private remember(obj: KubeObject): void {
    const { name, resourceVersion } = obj.metadata ?? {};
    if (name && resourceVersion) this.written.set(name, resourceVersion);
  }
}
