/**
 * After each integration file: the namespaces it created (`createNamespace`) and left are
 * swept (`sweepNamespace`: their custom resources deleted, finalizers and all, then the
 * namespaces). A later file's operator that watches every namespace, and may adopt in
 * every one, then finds none of them.
 */
import { afterAll } from "vitest";
import { sweepNamespace, takeCreatedNamespaces } from "./kube.js";

afterAll(async () => {
  await Promise.all(
    takeCreatedNamespaces().map(([name, kc]) =>
      sweepNamespace(kc, name).catch((err: unknown) => {
        // A control plane the file stopped (its own) has nothing left to sweep.
        if (!String(err).includes("ECONNREFUSED"))
          console.warn(`namespace ${name} was not swept: ${String(err)}`);
      }),
    ),
  );
});
