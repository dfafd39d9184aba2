import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ExecConfig, ExecCredentialPlugin } from "./kube-exec.js";

const V1 = "client.authentication.k8s.io/v1";
let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "kube-exec-"));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

/** A log that keeps its lines as JSON text. */
function captureLog() {
  const lines: string[] = [];
  const at =
    (level: string) =>
    (obj: object, msg: string): void => {
      lines.push(JSON.stringify({ level, ...obj, msg }));
    };
  return { lines, log: { info: at("info"), warn: at("warn") } as never };
}

/**
 * A plugin as `sh -c`: counts its runs in a file, answers `tok-<run>` (with EXPIRES as
 * expirationTimestamp when set) after `before` ran.
 */
function plugin(name: string, before = "", more: Partial<ExecConfig> = {}): ExecConfig {
  const counter = join(dir, name);
  const script =
    `n=$(cat ${counter} 2>/dev/null || echo 0); n=$((n+1)); echo $n > ${counter}; ${before}` +
    `exp=""; [ -n "$EXPIRES" ] && exp=",\\"expirationTimestamp\\":\\"$EXPIRES\\""; ` +
    `printf '{"apiVersion":"${V1}","kind":"ExecCredential","status":{"token":"tok-%s"%s}}' $n "$exp"`;
  return { apiVersion: V1, command: "sh", args: ["-c", script], interactiveMode: "Never", ...more };
}

const runs = async (name: string) => Number((await readFile(join(dir, name), "utf8")).trim());

describe("ExecCredentialPlugin", () => {
  it("runs once for requests that ask together, and keeps the answer until it expires", async () => {
    const expires = new Date(Date.now() + 1_500).toISOString();
    const p = new ExecCredentialPlugin(
      plugin("concurrent", "sleep 0.3; ", { env: [{ name: "EXPIRES", value: expires }] }),
      undefined,
    );
    const answers = await Promise.all(Array.from({ length: 20 }, () => p.credential()));
    expect(new Set(answers.map((a) => a.token))).toEqual(new Set(["tok-1"]));
    expect(answers[0]?.expiresAt).toBe(Date.parse(expires));
    expect((await p.credential()).token).toBe("tok-1");
    expect(await runs("concurrent")).toBe(1);
    await new Promise((r) => setTimeout(r, Date.parse(expires) - Date.now() + 50));
    expect((await p.credential()).token).toBe("tok-2");
    // Refused by the server: run again at once.
    p.invalidate();
    expect((await p.credential()).token).toBe("tok-3");
  });

  it("runs without stdin and tells the plugin it is not interactive, with the cluster when asked", async () => {
    const info = join(dir, "exec-info");
    const cluster = { server: "https://api:6443", "tls-server-name": "api.internal" };
    const p = new ExecCredentialPlugin(
      // `cat` would wait forever on an open stdin.
      plugin("stdin", `cat >/dev/null; printf '%s' "$KUBERNETES_EXEC_INFO" > ${info}; `, {
        provideClusterInfo: true,
      }),
      cluster,
    );
    expect((await p.credential()).token).toBe("tok-1");
    expect(JSON.parse(await readFile(info, "utf8"))).toEqual({
      apiVersion: V1,
      kind: "ExecCredential",
      spec: { interactive: false, cluster },
    });
  });

  it("logs the plugin's stderr without the token, and its failures without its output", async () => {
    const { lines, log } = captureLog();
    const ok = new ExecCredentialPlugin(
      plugin("stderr", `echo "refreshing; last token tok-$n" >&2; `),
      undefined,
      log,
    );
    expect((await ok.credential()).token).toBe("tok-1");
    expect(lines).toEqual([expect.stringContaining("refreshing; last token [REDACTED]")]);
    expect(lines.join("\n")).not.toContain("tok-1");

    lines.length = 0;
    const failing = new ExecCredentialPlugin(
      {
        ...plugin("failing"),
        args: ["-c", "echo 'secret-ish-output'; echo 'login expired' >&2; exit 3"],
      },
      undefined,
      log,
    );
    await expect(failing.credential()).rejects.toThrow("the exec plugin sh failed (3)");
    expect(lines).toEqual([expect.stringMatching(/"level":"warn".*login expired/)]);

    const garbage = new ExecCredentialPlugin(
      { ...plugin("garbage"), args: ["-c", `printf '{"status":{"token":"leaky-token-1234"}'`] },
      undefined,
      log,
    );
    const err = await garbage.credential().catch((e: Error) => e);
    expect(String(err)).toMatch(/answered something other than JSON/);
    expect(String(err)).not.toContain("leaky");
    expect(lines.join("\n")).not.toContain("leaky");
  });

  it("refuses what client-go refuses", async () => {
    const bad: [Partial<ExecConfig>, RegExp][] = [
      [{ interactiveMode: undefined }, /needs interactiveMode \(v1\)/],
      [{ interactiveMode: "Always" }, /interactiveMode Always: the operator has no terminal/],
      [{ interactiveMode: "Sometimes" }, /unknown interactiveMode "Sometimes"/],
      [{ apiVersion: "client.authentication.k8s.io/v1alpha1" }, /v1 or v1beta1 is supported/],
      [{ command: "" }, /has no command/],
    ];
    for (const [more, message] of bad) {
      expect(() => new ExecCredentialPlugin({ ...plugin("bad"), ...more }, undefined)).toThrow(
        message,
      );
    }
    // v1beta1 defaults interactiveMode (IfAvailable); its answer must say v1beta1.
    const beta = new ExecCredentialPlugin(
      {
        ...plugin("beta"),
        apiVersion: "client.authentication.k8s.io/v1beta1",
        interactiveMode: undefined,
      },
      undefined,
    );
    await expect(beta.credential()).rejects.toThrow(/answered apiVersion .*\/v1, not .*\/v1beta1/);
  });

  it("names a command that is not installed, with the plugin's install hint", async () => {
    const p = new ExecCredentialPlugin(
      {
        ...plugin("absent"),
        command: "aidc-no-such-plugin",
        installHint: "Install it from the portal.",
      },
      undefined,
    );
    await expect(p.credential()).rejects.toThrow(
      "the exec plugin aidc-no-such-plugin failed (not found; Install it from the portal.)",
    );
  });
});
