import * as k8s from "@kubernetes/client-node";
import { beforeAll, describe, expect, it } from "vitest";
import { allCrds } from "../../src/crds/index.js";
import { installCrds, refusal } from "../support/crds.js";
import { adminKubeConfig, createNamespace } from "../support/kube.js";
import { invalidCases } from "./invalid-manifests.js";

describe("admission of invalid manifests", () => {
  const kc = adminKubeConfig();
  const custom = kc.makeApiClient(k8s.CustomObjectsApi);
  let namespace = "";

  beforeAll(async () => {
    await installCrds(kc);
    namespace = await createNamespace(kc, "crd-invalid");
  });

  it("has at least 30 cases", () => {
    expect(invalidCases.length).toBeGreaterThanOrEqual(30);
  });

  it.each(invalidCases.map((c, i) => [c.kind, c.reason, i, c] as const))(
    "refuses a %s with %s, naming the field",
    async (_kind, _reason, i, c) => {
      const def = allCrds.find((d) => d.kind === c.kind);
      if (!def) throw new Error(`unknown kind ${c.kind}`);
      const body: Record<string, unknown> = {
        apiVersion: `${def.group}/${def.version}`,
        kind: def.kind,
        metadata: { name: `bad-${i}` },
      };
      if (c.spec !== undefined) body.spec = c.spec;
      const err = await custom
        .createNamespacedCustomObject({
          group: def.group,
          version: def.version,
          namespace,
          plural: def.plural,
          body,
        })
        .then(() => undefined)
        .catch((e: unknown) => e);
      expect(err, "the API server accepted it").toBeDefined();
      const { code, message } = refusal(err);
      expect(code).toBe(422);
      expect(message).toContain(`${c.field}:`);
      expect(message).toContain(c.says);
    },
  );
});
