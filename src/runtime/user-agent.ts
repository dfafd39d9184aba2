import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { arch, platform } from "node:os";
import { fileURLToPath } from "node:url";

/** The commit the bundle was built from, set by scripts/bundle-dist.ts (absent when running from source). */
declare const __AIDC_GIT_SHA__: string | undefined;

let cached: string | undefined;

/**
 * What the operator sends as `User-Agent` to the API server, in client-go's shape:
 * `aidc-operator/<version> (<os>/<arch>) <git sha>`. The version is package.json's (two
 * directories up, from src/runtime, dist/runtime and dist/bundle alike), the sha the
 * one baked into the bundle, else `git rev-parse` of the checkout when running from
 * source, else `unknown`.
 */
export function operatorUserAgent(): string {
  cached ??= `aidc-operator/${version()} (${platform()}/${arch()}) ${gitSha()}`;
  return cached;
}

function version(): string {
  try {
    const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8"));
    return typeof pkg.version === "string" ? pkg.version : "unknown";
  } catch {
    return "unknown";
  }
}

function gitSha(): string {
  if (typeof __AIDC_GIT_SHA__ === "string" && __AIDC_GIT_SHA__ !== "") return __AIDC_GIT_SHA__;
  try {
    const sha = execFileSync("git", ["rev-parse", "--short=12", "HEAD"], {
      cwd: fileURLToPath(new URL(".", import.meta.url)),
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
      timeout: 5_000,
    }).trim();
    return /^[0-9a-f]+$/.test(sha) ? sha : "unknown";
  } catch {
    return "unknown";
  }
}
