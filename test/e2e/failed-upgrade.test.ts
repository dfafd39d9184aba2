import { afterAll, describe, expect, it } from "vitest";
import {
  CHART_DIR,
  CHART_TEST_BASE_URL,
  randomSuffix,
  runTool,
  setArgs,
} from "../support/chart.js";
import { documentedHelmUpgrade } from "../support/chart-copy.js";
import { adminKubeConfig, createNamespace } from "../support/kube.js";

/**
 * What docs/install.md says a `helm upgrade --wait` that fails leaves, with Helm 3 and 4.
 * The control plane has no kubelet: no pod is ever ready, so every waited upgrade (and
 * rollback) runs to its `--timeout`.
 */

type Tool = "helm" | "helm4";
/** The upgrade that fails: an object only it adds, and an image that never starts. */
const FAILING = setArgs({ "networkPolicy.enabled": true, "image.tag": "does-not-start" });
const ROLLBACK: Record<Tool, string> = { helm: "--atomic", helm4: "--rollback-on-failure" };

describe("a helm upgrade --wait that fails", () => {
  const installed: { tool: Tool; release: string; namespace: string }[] = [];

  afterAll(async () => {
    for (const { tool, release, namespace } of installed) {
      await runTool(tool, ["uninstall", release, "-n", namespace, "--no-hooks"]).catch(
        () => undefined,
      );
      await runTool("kubectl", ["delete", "namespace", namespace, "--wait=false"]);
    }
  });

  /** A release installed without waiting, and its failed `--wait` upgrade's error. */
  async function failedUpgrade(tool: Tool, flags: string[]) {
    const namespace = await createNamespace(adminKubeConfig(), `failed-${tool}`);
    const release = `failed-${randomSuffix()}`;
    installed.push({ tool, release, namespace });
    await runTool(tool, [
      ...["install", release, CHART_DIR, "-n", namespace, "--skip-crds"],
      ...setArgs({ "service.baseUrl": CHART_TEST_BASE_URL }),
    ]);
    const upgrade = [...documentedHelmUpgrade(release, namespace), ...FAILING];
    await expect(
      runTool(tool, [...upgrade, "--wait", "--timeout", "5s", ...flags]),
    ).rejects.toThrow(/UPGRADE FAILED/);
    const get = async (kind: string, name: string) =>
      (
        await runTool("kubectl", ["get", kind, "-n", namespace, "-o", "name", name]).catch(() => ({
          stdout: "",
        }))
      ).stdout.trim();
    const history = async () =>
      JSON.parse(
        (await runTool(tool, ["history", release, "-n", namespace, "-o", "json"])).stdout,
      ) as { revision: number; status: string }[];
    const image = async () =>
      (
        await runTool("kubectl", [
          ...["get", "deployment", `${release}-aidc-operator`, "-n", namespace],
          ...["-o", "jsonpath={.spec.template.spec.containers[0].image}"],
        ])
      ).stdout;
    const networkPolicy = () => get("networkpolicy", `${release}-aidc-operator`);
    return { release, namespace, history, image, networkPolicy };
  }

  it.each(["helm", "helm4"] as const)(
    "with %s leaves the revision failed and its objects, which the next upgrade and uninstall keep",
    async (tool) => {
      const r = await failedUpgrade(tool, []);
      expect((await r.history()).map((h) => h.status)).toEqual(["deployed", "failed"]);
      expect(await r.networkPolicy()).not.toBe("");
      expect(await r.image()).toMatch(/:does-not-start$/);

      // The documented upgrade starts from the last deployed revision's values.
      await runTool(tool, documentedHelmUpgrade(r.release, r.namespace));
      const { stdout } = await runTool(tool, [
        ...["get", "values", r.release, "-n", r.namespace, "-o", "json"],
      ]);
      expect(JSON.parse(stdout)).not.toHaveProperty("networkPolicy");
      expect(await r.image()).not.toMatch(/:does-not-start$/);
      expect(await r.networkPolicy()).not.toBe("");
      await runTool(tool, ["uninstall", r.release, "-n", r.namespace, "--no-hooks"]);
      expect(await r.networkPolicy()).not.toBe("");
    },
  );

  it.each(["helm", "helm4"] as const)(
    "with %s --cleanup-on-fail deletes the objects the failed revision added, nothing else",
    async (tool) => {
      const r = await failedUpgrade(tool, ["--cleanup-on-fail"]);
      expect((await r.history()).map((h) => h.status)).toEqual(["deployed", "failed"]);
      expect(await r.networkPolicy()).toBe("");
      expect(await r.image()).toMatch(/:does-not-start$/);
    },
  );

  it.each(["helm", "helm4"] as const)(
    "with %s and its rollback flag rolls back in a revision of its own",
    async (tool) => {
      const r = await failedUpgrade(tool, [ROLLBACK[tool]]);
      expect((await r.history()).map((h) => h.revision)).toEqual([1, 2, 3]);
      expect(await r.networkPolicy()).toBe("");
      expect(await r.image()).not.toMatch(/:does-not-start$/);
    },
  );
});
