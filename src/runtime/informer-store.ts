/** What an informer (informer.ts) keeps its objects in, and the changes it tells of them. */
import type { KubeObject } from "./resource.js";

/** What changed in an informer's store; `old` is the previous object of an update. */
export interface StoreEvent {
  type: "add" | "update" | "delete";
  object: KubeObject;
  old?: KubeObject;
}

/** Listens to the changes of an informer's store. */
export type InformerHandler = (event: StoreEvent) => void;

/** Where an informer keeps the objects it lists and watches (cache.ts's ObjectStore). */
export interface InformerStore {
  upsert(obj: KubeObject): StoreEvent | undefined;
  remove(obj: KubeObject): StoreEvent | undefined;
  replace(items: KubeObject[], namespace?: string): StoreEvent[];
}
