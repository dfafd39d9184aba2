import * as k8s from "@kubernetes/client-node";
import { DEFAULT_WATCHDOG_MS } from "./defaults.js";
import type { KubeClient } from "./kube.js";
import { connectionGeneration, dropConnections } from "./kube-connection.js";
import { type KubeObject, type ResourceDescriptor, resourcePath } from "./resource.js";

/** A watch in progress; `abort` ends it without calling its done callback usefully. */
export interface WatchHandle {
  abort(): void;
}

/**
 * The list and watch calls of one kind in one scope (a namespace or all). The real one
 * is {@link kubeListerWatcher}; tests pass fakes.
 */
export interface ListerWatcher {
  list(): Promise<{ items: KubeObject[]; resourceVersion: string }>;
  /**
   * Starts a watch from `resourceVersion`. `onEvent` gets ADDED, MODIFIED, DELETED,
   * BOOKMARK and ERROR events; `onDone` is called once when the stream ends (`err`
   * null for a clean close; an error with `statusCode`/`code` 410 means Gone).
   */
  watch(
    resourceVersion: string,
    onEvent: (type: string, obj: KubeObject) => void,
    onDone: (err: unknown) => void,
  ): Promise<WatchHandle>;
  /**
   * Called when the last watch went silent (the informer's watchdog fired): the
   * connection under it may be dead and should not be reused. Optional.
   */
  silent?(): void;
}

/**
 * The real list+watch of `res` in `namespace` (all when undefined) through client-node,
 * of the objects `res.labelSelector` selects when it has one.
 */
export function kubeListerWatcher(
  kube: KubeClient,
  res: ResourceDescriptor,
  namespace: string | undefined,
  options: { watchdogMs?: number } = {},
): ListerWatcher {
  // The shared connection the last watch started on (see kube-connection.ts).
  let generation = -1;
  return {
    list: () =>
      kube.list(res, namespace, res.labelSelector ? { labelSelector: res.labelSelector } : {}),
    silent: () => {
      dropConnections(kube.config, generation);
    },
    async watch(resourceVersion, onEvent, onDone) {
      generation = connectionGeneration(kube.config);
      const watch = new k8s.Watch(kube.config);
      // The informer's own watchdog decides when a silent watch is dead; client-node's
      // inactivity timeout (30 s by default) would cut quiet but healthy watches.
      // The field is private in the typings but is the only knob (client-node 2.0).
      (watch as unknown as { requestTimeoutMs: number }).requestTimeoutMs =
        (options.watchdogMs ?? DEFAULT_WATCHDOG_MS) * 2;
      const controller = await watch.watch(
        resourcePath(res, namespace),
        {
          resourceVersion,
          allowWatchBookmarks: true,
          ...(res.labelSelector ? { labelSelector: res.labelSelector } : {}),
          // Like client-go: the server ends each watch after 5-10 min, spreading relists.
          timeoutSeconds: 300 + Math.floor(Math.random() * 300),
        },
        (type: string, obj: KubeObject) => onEvent(type, obj),
        onDone,
      );
      return { abort: () => controller.abort() };
    },
  };
}
