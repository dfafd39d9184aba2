import * as k8s from "@kubernetes/client-node";
import { beforeAll, describe, expect, it } from "vitest";
import { installCrds } from "../support/crds.js";
import { adminKubeConfig, createNamespace } from "../support/kube.js";
import { expectRefused, invalidCases } from "./invalid-manifests.js";

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
      await expectRefused(custom, namespace, c, `bad-${i}`);
    },
  );
});
