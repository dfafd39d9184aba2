import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  CHART_DIR,
  CHART_TEST_BASE_URL,
  randomSuffix,
  runTool,
  setArgs,
} from "../support/chart.js";
import { documentedHelmUpgrade } from "../support/chart-copy.js";
import { adminKubeConfig, createNamespace, eventually } from "../support/kube.js";
import { type Kubelet, podReady, startKubelet } from "../support/kubelet.js";

/**
 * What docs/install.md says a `helm upgrade --wait` that fails leaves, with Helm 3 and 4.
 * test/support/kubelet.ts runs the pods: those of the failing image never become ready.
 */

type Tool = "helm" | "helm4";
/** The upgrade that fails: an object only it adds, and an image that never starts. */
const FAILING = setArgs({ "networkPolicy.enabled": true, "image.tag": "does-not-start" });
const neverStarts = (image: string) => image.endsWith(":does-not-start");
const ROLLBACK: Record<Tool, string> = { helm: "--atomic", helm4: "--rollback-on-failure" };

describe("a helm upgrade --wait that fails", () => {
  const installed: { tool: Tool; release: string; namespace: string }[] = [];
  let kubelet: Kubelet;

  beforeAll(async () => {
    kubelet = await startKubelet(adminKubeConfig(), neverStarts);
  });

  afterAll(async () => {
    for (const { tool, release, namespace } of installed) {
      await runTool(tool, ["uninstall", release, "-n", namespace, "--no-hooks"]).catch(
        () => undefined,
      );
    }
    await kubelet?.stop();
    for (const { namespace } of installed) {
      await runTool("kubectl", ["delete", "namespace", namespace, "--wait=false"]);
    }
  });

  /** A release installed and ready (`--wait`), and its failed `--wait` upgrade's error. */
  async function failedUpgrade(tool: Tool, flags: string[]) {
    const namespace = await createNamespace(adminKubeConfig(), `failed-${tool}`);
    kubelet.serve(namespace);
    const release = `failed-${randomSuffix()}`;
    installed.push({ tool, release, namespace });
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
    /** Each pod not being deleted: its image, and "ready" or its container's waiting reason. */
    const pods = async () =>
      (await kubelet.pods(namespace))
        .map((p) => {
          const waiting = p.status?.containerStatuses?.[0]?.state?.waiting?.reason;
          return `${p.spec?.containers[0]?.image} ${podReady(p) ? "ready" : waiting}`;
        })
        .sort();
    await runTool(tool, [
      ...["install", release, CHART_DIR, "-n", namespace, "--skip-crds"],
      ...setArgs({ "service.baseUrl": CHART_TEST_BASE_URL }),
      ...["--wait", "--timeout", "60s"],
    ]);
    const installedImage = await image();
    expect((await history()).map((h) => h.status)).toEqual(["deployed"]);
    const upgrade = [...documentedHelmUpgrade(release, namespace), ...FAILING];
    await expect(
      runTool(tool, [...upgrade, "--wait", "--timeout", "5s", ...flags]),
    ).rejects.toThrow(/UPGRADE FAILED/);
    return { release, namespace, history, image, installedImage, networkPolicy, pods };
  }

  it.each(["helm", "helm4"] as const)(
    "with %s leaves the revision failed and its objects, which the next upgrade and uninstall keep",
    async (tool) => {
      const r = await failedUpgrade(tool, []);
      expect((await r.history()).map((h) => h.status)).toEqual(["deployed", "failed"]);
      expect(await r.networkPolicy()).not.toBe("");
      expect(await r.image()).toMatch(/:does-not-start$/);
      // The rollout stopped at its first new pod: the installed ones still serve.
      expect(await r.pods()).toEqual([
        `${r.installedImage} ready`,
        `${r.installedImage} ready`,
        expect.stringMatching(/:does-not-start ImagePullBackOff$/),
      ]);

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
      expect((await r.history()).map((h) => h.status)).toEqual([
        "superseded",
        "failed",
        "deployed",
      ]);
      expect(await r.networkPolicy()).toBe("");
      expect(await r.image()).toBe(r.installedImage);
      // Back to the installed pods alone, ready; the failing one is deleted.
      const running = [`${r.installedImage} ready`, `${r.installedImage} ready`];
      await eventually(async () => (await r.pods()).join() === running.join());
    },
  );
});
