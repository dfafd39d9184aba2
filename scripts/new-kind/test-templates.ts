/**
 * What `npm run new-kind` writes besides the sources: the sample manifest
 * (deploy/samples/<kind>.yaml) and the integration test skeleton
 * (test/integration/<kind>.test.ts), which runs the kind against a real API server and
 * the emulator and then fails, saying what to fill in, until its author replaces that
 * line with the kind's own assertions.
 */
import type { KindNames } from "./names.js";

/** The message the skeleton fails with until it is filled in. */
export function skeletonMessage(n: KindNames): string {
  return `test/integration/${n.lower}.test.ts is the scaffold's skeleton: fill it in with what ${n.kind} must do (what the service received, the status fields, an update, a refusal, a deletion; see docs/adding-a-kind.md), then remove this line`;
}

/** The content of deploy/samples/<lower>.yaml. */
export function sampleManifest(n: KindNames): string {
  return `# A ${n.kind}: a ${n.words} of the service, created from the spec (see docs/crds.md).
# TODO(${n.kind}): a sample a user would start from, each field explained.
apiVersion: aidc.io/v1alpha1
kind: ${n.kind}
metadata:
  name: sample-${n.lower}
spec:
  # Size in GB; a change grows the ${n.words}, a shrink is refused.
  sizeGB: 10
  # Orphan (default) keeps the ${n.words} in the service when the object is deleted.
  deletionPolicy: Orphan
`;
}

/**
 * The content of deploy/samples/real-service/<lower>.yaml: the spec a user adapts to the
 * real service, product codes and names as `<...>` placeholders that
 * docs/getting-started.md explains.
 */
export function realServiceSample(n: KindNames): string {
  return `# The real service: a ${n.kind}. Replace every <...> (docs/getting-started.md).
# TODO(${n.kind}): the fields a user sets, with placeholders for what only the service knows.
apiVersion: aidc.io/v1alpha1
kind: ${n.kind}
metadata:
  name: sample-${n.lower}
spec:
  sizeGB: 10
  deletionPolicy: Orphan
`;
}

/** The content of test/integration/<lower>.test.ts. */
export function integrationTest(n: KindNames): string {
  return `import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ${n.camel}Controller } from "../../src/controllers/${n.lower}/controller.js";
import { ${n.camel}Crd } from "../../src/crds/${n.lower}.js";
import { adminKubeConfig, createNamespace } from "../support/kube.js";
import { conditionOf, ObjectsOf } from "../support/managed.js";
import { startTestOperator, type TestOperator } from "../support/operator.js";
import { verdictsOf } from "../support/verdicts.js";

/** The ${n.kind} controller against a real API server and the emulator. */
describe("${n.kind} controller", () => {
  let op: TestOperator;
  let objects: ObjectsOf;

  beforeAll(async () => {
    const namespace = await createNamespace(adminKubeConfig(), "${n.lower}");
    op = await startTestOperator({
      controllers: [(deps) => ${n.camel}Controller(deps, { visibilityGraceMs: 1_000 })],
      namespaces: [namespace],
    });
    objects = new ObjectsOf(op.kube, ${n.camel}Crd, namespace);
  }, 60_000);

  afterAll(async () => {
    await op?.stop();
  });

  it("creates the ${n.words} in the service and becomes Ready", async () => {
    await objects.create("first", { sizeGB: 10 });
    const obj = await objects.waitForCondition("first", "Ready", "True", "Available");
    expect(conditionOf(obj, "Synced")?.status).toBe("True");
    expect(await op.admin.requests({ endpoint: "create${n.kind}" })).toHaveLength(1);
    // What Flux (kstatus) and Argo CD make of it; judge its other states too (progressing,
    // terminal, deleting), as test/integration/health-verdicts.test.ts does for the first kinds.
    expect(verdictsOf([obj])).toEqual([{ kstatus: "Current", argocd: "Healthy" }]);
    throw new Error(${JSON.stringify(skeletonMessage(n))});
  });
});
`;
}
