/**
 * The bench's Go reference operator (tools/reference-operator) must speak the
 * operator's protocol, or the comparison measures two different jobs: the same
 * finalizer, annotation keys, kind and service paths.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { root } from "../../scripts/generated-files.js";
import { ANNOTATIONS } from "../../src/controllers/managed/decisions.js";
import { NAS_FINALIZER } from "../../src/controllers/nasvolume/controller.js";
import { nasVolumeCrd } from "../../src/crds/nasvolume.js";
import { DEFAULT_ENDPOINTS } from "../../src/service/endpoints.js";

const source = readFileSync(join(root, "tools/reference-operator/main.go"), "utf8");

describe("the Go reference operator", () => {
  it("uses the operator's finalizer, annotations and kind", () => {
    expect(source).toContain(`finalizer     = "${NAS_FINALIZER}"`);
    expect(source).toContain(`annPending    = "${ANNOTATIONS.createPending}"`);
    expect(source).toContain(`annKey        = "${ANNOTATIONS.subscriptionKey}"`);
    expect(source).toContain(`annExternalID = "${ANNOTATIONS.externalId}"`);
    expect(source).toContain(
      `Group: "${nasVolumeCrd.group}", Version: "${nasVolumeCrd.version}", Kind: "${nasVolumeCrd.kind}"`,
    );
  });

  it("calls the service paths the operator calls", () => {
    for (const name of ["subscribeNas", "getNasSubscriptionResult", "getNas"] as const) {
      const path = DEFAULT_ENDPOINTS[name].path.replace(/\{[a-z]+\}.*$/i, "");
      expect(source, name).toContain(`"${path}`);
    }
  });
});
