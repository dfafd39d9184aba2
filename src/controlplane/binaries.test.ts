import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { controlPlaneBinaries, repoRoot } from "./binaries.js";
import { freePort } from "./controlplane.js";

describe("control-plane harness helpers", () => {
  it("finds the repository root with the Go wrapper modules", () => {
    expect(existsSync(join(repoRoot, "tools", "controlplane", "build.sh"))).toBe(true);
    expect(existsSync(join(repoRoot, "tools", "controlplane", "kubernetes", "go.mod"))).toBe(true);
  });

  it("hands out distinct free loopback ports", async () => {
    const ports = await Promise.all([freePort(), freePort(), freePort()]);
    for (const p of ports) expect(p).toBeGreaterThan(0);
    expect(new Set(ports).size).toBe(3);
  });

  it("refuses an AIDC_CONTROLPLANE_BIN_DIR without kube-controller-manager, naming it", async () => {
    const dir = mkdtempSync(join(tmpdir(), "aidc-bins-"));
    for (const bin of ["etcd", "kube-apiserver", "kubectl", "helm"]) {
      writeFileSync(join(dir, bin), "#!/bin/sh\n", { mode: 0o755 });
    }
    const before = process.env.AIDC_CONTROLPLANE_BIN_DIR;
    process.env.AIDC_CONTROLPLANE_BIN_DIR = dir;
    try {
      await expect(controlPlaneBinaries()).rejects.toThrow(
        `control-plane binary missing: ${join(dir, "kube-controller-manager")} (AIDC_CONTROLPLANE_BIN_DIR must hold every binary`,
      );
      writeFileSync(join(dir, "kube-controller-manager"), "#!/bin/sh\n", { mode: 0o755 });
      expect((await controlPlaneBinaries()).kubeControllerManager).toBe(
        join(dir, "kube-controller-manager"),
      );
    } finally {
      if (before === undefined) delete process.env.AIDC_CONTROLPLANE_BIN_DIR;
      else process.env.AIDC_CONTROLPLANE_BIN_DIR = before;
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
