import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { repoRoot } from "./binaries.js";
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
});
