import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { root } from "../../scripts/generated-files.js";
import { kindNames } from "../../scripts/new-kind/names.js";
import {
  CONTROLLER_REGISTRY,
  CRD_REGISTRY,
  conflictOf,
  kindFiles,
  registeredKind,
} from "../../scripts/new-kind.js";

/**
 * The pure parts of `npm run new-kind` (scripts/new-kind.ts): the names it derives, the
 * registry lines it adds, and its refusals. test/e2e/new-kind.test.ts scaffolds a kind
 * for real and compiles, lints and tests it.
 */
describe("npm run new-kind", () => {
  it("derives every spelling from a PascalCase name", () => {
    expect(kindNames("BlockVolume")).toEqual({
      kind: "BlockVolume",
      lower: "blockvolume",
      camel: "blockVolume",
      constant: "BLOCK_VOLUME",
      plural: "blockvolumes",
      words: "block volume",
    });
    expect(kindNames("S3Bucket").constant).toBe("S3_BUCKET");
    expect(kindNames("Address").plural).toBe("addresses");
  });

  it("refuses a name that is not PascalCase, saying how to write one", () => {
    for (const bad of ["blockVolume", "Block_Volume", "BLOCK", "Block-Volume", "", "9Lives"]) {
      expect(() => kindNames(bad)).toThrow(/is not a kind name: give it in PascalCase/);
    }
  });

  it("refuses a kind that is registered, naming where", () => {
    expect(conflictOf(kindNames("NasVolume"), root)).toBe(
      "the kind NasVolume exists (src/crds/index.ts registers nasVolumeCrd)",
    );
    expect(conflictOf(kindNames("NeverRegisteredThing"), root)).toBeUndefined();
  });

  it("adds the kind to each registry's imports and list, changing nothing else", () => {
    const read = (p: string) => readFileSync(join(root, p), "utf8");
    const out = registeredKind(kindNames("Gizmo"), read);
    const added = (path: string) => {
      const before = new Set(read(path).split("\n"));
      return (out.get(path) ?? "").split("\n").filter((l) => !before.has(l));
    };
    expect(added(CRD_REGISTRY)).toEqual([
      'import { gizmoCrd } from "./gizmo.js";',
      'export * from "./gizmo.js";',
      "  gizmoCrd,",
    ]);
    expect(added(CONTROLLER_REGISTRY)).toEqual([
      'import { gizmoController } from "./gizmo/controller.js";',
      "  gizmoController,",
    ]);
    expect((out.get(CRD_REGISTRY) ?? "").indexOf("  gizmoCrd,")).toBeLessThan(
      (out.get(CRD_REGISTRY) ?? "").indexOf("export const REASONS"),
    );
  });

  it("writes the kind's files in its own places only", () => {
    expect([...kindFiles(kindNames("Gizmo")).keys()]).toEqual([
      "src/crds/gizmo.ts",
      "src/controllers/gizmo/controller.ts",
      "src/controllers/gizmo/external.ts",
      "src/controllers/gizmo/decisions.ts",
      "src/controllers/gizmo/decisions.test.ts",
      "src/service/kinds/gizmo.ts",
      "src/emulator/kinds/gizmo.ts",
      "src/emulator/kinds/gizmo.settings.ts",
      "deploy/samples/gizmo.yaml",
      "deploy/samples/real-service/gizmo.yaml",
      "test/integration/gizmo.test.ts",
    ]);
  });
});
