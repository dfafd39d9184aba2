import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { readdir, readFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { type Playground, startPlayground } from "../../src/cli/dev.js";
import { controlPlaneBinaries, repoRoot } from "../../src/controlplane/binaries.js";
import { kstatusOf } from "../support/kstatus.js";
import { eventually } from "../support/kube.js";
import { kustomizedSamples } from "../support/samples.js";

/**
 * `npm run dev` (startPlayground of src/cli/dev.ts), the README's first command: its own
 * control plane, the emulator, the CRDs, the operator and the samples. Every sample
 * becomes Ready and kstatus Current (what Flux, kpt and Argo CD users see first: no
 * Synced=False, nothing Stalled); the emulator path of docs/getting-started.md, run as
 * written, brings the real-service samples to the same, and its ServiceConnection block
 * (with the lines npm run dev prints) a Ready connection; and stop() leaves no etcd, kube-apiserver or kube-controller-manager behind and removes the
 * playground's temporary directory.
 */

/**
 * The kinds of the namespaced samples, one object each: what deploy/samples'
 * kustomization applies (generated from the samples of every kind).
 */
const SAMPLE_KINDS = kustomizedSamples().map((s) => s.kind);

/** Minimal shape of an aidc resource as `kubectl get -o json` returns it. */
interface AidcObject {
  kind: string;
  metadata: { name: string; namespace: string; generation?: number };
  status?: {
    conditions?: { type: string; status: string; observedGeneration?: number }[];
    mounts?: { name: string; state: string; instanceId?: string }[];
    phase?: string;
    attachedInstanceId?: string;
  };
}

/** Pids and names of the processes whose command line mentions `dir`. */
async function processesUsing(dir: string): Promise<string[]> {
  const found: string[] = [];
  for (const entry of await readdir("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const cmdline = await readFile(`/proc/${entry}/cmdline`, "utf8").catch(() => "");
    if (cmdline.includes(dir)) {
      found.push(`${entry} ${cmdline.split("\0")[0]?.split("/").pop() ?? ""}`);
    }
  }
  return found;
}

/** Why `obj` is not Ready for its current generation; undefined when it is. */
function notReady(obj: AidcObject): string | undefined {
  const ready = obj.status?.conditions?.find((c) => c.type === "Ready");
  if (ready?.status === "True" && ready.observedGeneration === obj.metadata.generation) {
    return undefined;
  }
  return `${obj.kind}/${obj.metadata.name}: Ready=${ready?.status ?? "none"}`;
}

describe("the local playground (npm run dev)", () => {
  let pg: Playground | undefined;
  const lines: string[] = [];
  const logs: string[] = [];

  afterAll(async () => {
    await pg?.stop();
  });

  it("brings every sample to Ready and kstatus Current within a minute", async () => {
    // The playground's operator logs at warn (the playground's default level), here
    // into `logs` rather than stdout.
    const level = process.env.AIDC_LOG_LEVEL;
    delete process.env.AIDC_LOG_LEVEL;
    try {
      pg = await startPlayground({
        out: (line) => lines.push(line),
        operatorLog: (line) => logs.push(line),
      });
    } finally {
      if (level !== undefined) process.env.AIDC_LOG_LEVEL = level;
    }
    const playground = pg;
    expect(lines).toEqual(
      expect.arrayContaining(["CRDs installed", "samples applied in namespace default"]),
    );
    // The binaries are cached by the integration run's own control plane: nothing is
    // built, so nothing says it is.
    expect(lines.filter((l) => /build/i.test(l))).toEqual([]);
    let pending: string[] = ["nothing listed yet"];
    let items: AidcObject[] = [];
    await eventually(
      async () => {
        const json = await playground.kubectl(["get", "aidc", "-n", "default", "-o", "json"]);
        items = (JSON.parse(json) as { items: AidcObject[] }).items;
        const verdicts = kstatusOf(items);
        pending = items
          .map((o, i) => {
            const why = notReady(o);
            if (why !== undefined) return why;
            const v = verdicts[i];
            return v?.status === "Current"
              ? undefined
              : `${o.kind}/${o.metadata.name}: kstatus ${v?.status} (${v?.message})`;
          })
          .filter((m): m is string => m !== undefined);
        return items.length === SAMPLE_KINDS.length && pending.length === 0;
      },
      60_000,
      1000,
    ).catch(() => undefined);
    expect(pending, "samples not Ready and Current after 60 s").toEqual([]);
    // The FileSystem sample is mounted on the CciInstance sample's instance.
    const fs = items.find((o) => o.kind === "FileSystem");
    expect(fs?.status?.mounts).toMatchObject([
      { name: "notebook", state: "Mounted", instanceId: "cci-0001" },
    ]);
    // One object of each sample kind; the BlockVolume sample is attached to the
    // CciInstance sample's instance.
    expect(items.map((o) => o.kind).sort()).toEqual([...SAMPLE_KINDS].sort());
    const bv = items.find((o) => o.kind === "BlockVolume");
    expect(bv?.status).toMatchObject({ phase: "Attached", attachedInstanceId: "cci-0001" });
    // The Bucket sample is Ready in the playground's own S3 server (MinIO), as it asks.
    const bucket = JSON.parse(
      await playground.kubectl(["get", "bucket", "checkpoints", "-n", "default", "-o", "json"]),
    ) as { status: Record<string, unknown> };
    expect(bucket.status).toMatchObject({
      bucketName: "checkpoints",
      versioning: "Enabled",
      lifecycleRules: 2,
    });
    expect(lines.some((l) => l.startsWith("object storage (MinIO) at http://127.0.0.1:"))).toBe(
      true,
    );
    // The operator started once the API server could serve every kind: no failed list
    // (the cache's start report) or retried watch, and no stack trace, in its log.
    const failed = ["list/watch failed", "the cache has not synced", '"stack"'];
    expect(logs.filter((l) => failed.some((f) => l.includes(f)))).toEqual([]);
  });

  it("takes docs/getting-started.md's emulator path as written: the first job Ready and Current", async () => {
    const playground = pg as Playground;
    const guide = await readFile(join(repoRoot, "docs/getting-started.md"), "utf8");
    const block = /```sh\n(# emulator: your first job\n[\s\S]*?)```/.exec(guide)?.[1];
    expect(block, "the guide's emulator block").toBeDefined();
    // The codes it fills in are among those `npm run dev` prints.
    const printed = lines.filter((l) => l.startsWith("emulator ")).join("\n");
    for (const code of block?.match(/(?<=\/)(?:train|nas)\.[\w.]+(?=\/)/g) ?? []) {
      expect(printed).toContain(code);
    }
    const kubectlDir = dirname((await controlPlaneBinaries()).kubectl);
    await promisify(execFile)("bash", ["-euo", "pipefail", "-c", block ?? "false"], {
      cwd: repoRoot,
      env: {
        ...process.env,
        KUBECONFIG: playground.kubeconfigPath,
        PATH: `${kubectlDir}:${process.env.PATH}`,
      },
    });
    const items = (
      JSON.parse(await playground.kubectl(["get", "aidc", "-n", "demo", "-o", "json"])) as {
        items: AidcObject[];
      }
    ).items;
    expect(items.map((o) => o.kind).sort()).toEqual(["NasVolume", "TrainingJob"]);
    let verdicts: string[] = [];
    await eventually(async () => {
      const now = (
        JSON.parse(await playground.kubectl(["get", "aidc", "-n", "demo", "-o", "json"])) as {
          items: AidcObject[];
        }
      ).items;
      verdicts = kstatusOf(now).map((v, i) => `${now[i]?.kind}: ${v.status} ${v.message}`);
      return verdicts.every((v) => / Current /.test(v));
    }, 30_000).catch(() => undefined);
    expect(verdicts.filter((v) => !/ Current /.test(v))).toEqual([]);
    // The block waits up to 2 minutes, as a user's terminal would.
  }, 240_000);

  it("takes the guide's ServiceConnection block with the lines npm run dev prints: the connection Ready on the Secret of aidc-system", async () => {
    const playground = pg as Playground;
    const guide = await readFile(join(repoRoot, "docs/getting-started.md"), "utf8");
    const block = /```sh\n(# emulator: a ServiceConnection\n[\s\S]*?)```/.exec(guide)?.[1];
    expect(block, "the guide's ServiceConnection block").toBeDefined();
    // Only what a user's second terminal has: the printed lines, no KUBECONFIG of ours.
    const { KUBECONFIG: _, ...env } = process.env;
    await promisify(execFile)(
      "bash",
      ["-euo", "pipefail", "-c", `${playground.shellSetup}\n${block ?? "false"}`],
      { cwd: repoRoot, env },
    );
    const conn = JSON.parse(
      await playground.kubectl(["get", "svcconn", "team-a", "-o", "json"]),
    ) as { spec: { baseUrl: string }; status: { conditions: { type: string; reason: string }[] } };
    expect(conn.spec.baseUrl).toBe(playground.emulatorUrl);
    expect(conn.status.conditions.find((c) => c.type === "Ready")).toMatchObject({
      status: "True",
      reason: "Connected",
    });
    // The key is in the Secret the guide names, never in the playground's own lines.
    const key = Buffer.from(
      await playground.kubectl([
        "get",
        "secret",
        "aidc-operator-api-key",
        "-n",
        "aidc-system",
        "-o",
        "jsonpath={.data.apiKey}",
      ]),
      "base64",
    ).toString();
    expect(key).toMatch(/^[0-9a-f]{48}$/);
    expect(lines.join("\n")).toContain("aidc-system/aidc-operator-api-key");
    expect(lines.join("\n")).not.toContain(key);
    expect(playground.shellSetup).toMatch(/^export AIDC_EMULATOR_URL=http:\/\/127\.0\.0\.1:\d+$/m);
  }, 120_000);

  it("stops the control plane's processes and removes its directory", async () => {
    const playground = pg as Playground;
    const dir = dirname(playground.kubeconfigPath);
    const before = await processesUsing(dir);
    expect(before.join("\n")).toMatch(/etcd/);
    expect(before.join("\n")).toMatch(/kube-apiserver/);
    expect(before.join("\n")).toMatch(/kube-controller-manager/);
    await playground.stop();
    pg = undefined;
    expect(await processesUsing(dir)).toEqual([]);
    expect(existsSync(dir)).toBe(false);
  });
});
