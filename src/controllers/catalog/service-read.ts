/**
 * One read of a connection's catalogs from the service: the training specifications,
 * the NAS products, and the nas-storage-available answer of each NAS product in its
 * compute center (where the service has that operation).
 */
import type { AccountCalls } from "../../service/account.js";
import { verdictKey } from "./mirror.js";
import type { ReadCatalog } from "./refresh.js";

/**
 * Reads the catalogs with `service`; `previous` is the last read, whose availability
 * answer stands for a product the service does not answer about this time.
 */
export async function readCatalogs(
  service: AccountCalls,
  previous: ReadCatalog | undefined,
  at: number,
  connectionVersion: string,
): Promise<ReadCatalog> {
  const training = await service.tasks.products();
  const nas = await service.nas.products();
  const available = new Map<string, boolean>();
  if (service.isEndpointEnabled("isNasProductAvailable")) {
    for (const p of nas) {
      if (!p.productCode || p.aidcId === undefined) continue;
      const key = verdictKey(p.productCode, p.aidcId);
      try {
        available.set(
          key,
          await service.nas.isProductAvailable({
            aidcId: p.aidcId,
            resourceSpecCode: p.productCode,
          }),
        );
      } catch {
        // No answer this time: the last one stands (an unanswered check changes nothing).
        const last = previous?.available.get(key);
        if (last !== undefined) available.set(key, last);
      }
    }
  }
  return { at, connectionVersion, training, nas, available };
}
