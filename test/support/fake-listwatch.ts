import type { ListerWatcher, WatchHandle } from "../../src/runtime/listwatch.js";
import type { KubeObject } from "../../src/runtime/resource.js";

/**
 * A scripted API server for one informer scope: tests set `items` for the next list
 * and push watch events through `stream`.
 */
export class FakeListerWatcher implements ListerWatcher {
  items: KubeObject[] = [];
  resourceVersion = "10";
  lists = 0;
  watches: string[] = [];
  listError: unknown;
  watchStartError: unknown;
  stream?: {
    onEvent: (type: string, obj: KubeObject) => void;
    onDone: (err: unknown) => void;
    aborted: boolean;
  };

  async list() {
    this.lists++;
    if (this.listError) throw this.listError;
    return { items: structuredClone(this.items), resourceVersion: this.resourceVersion };
  }

  async watch(
    rv: string,
    onEvent: (type: string, obj: KubeObject) => void,
    onDone: (err: unknown) => void,
  ): Promise<WatchHandle> {
    this.watches.push(rv);
    if (this.watchStartError) {
      onDone(this.watchStartError);
      return { abort: () => undefined };
    }
    const stream = { onEvent, onDone, aborted: false };
    this.stream = stream;
    return {
      abort: () => {
        stream.aborted = true;
      },
    };
  }

  /** Sends an event on the open watch. */
  emit(type: "ADDED" | "MODIFIED" | "DELETED", obj: KubeObject): void {
    if (!this.stream) throw new Error("no watch open");
    this.stream.onEvent(type, structuredClone(obj));
  }
}
