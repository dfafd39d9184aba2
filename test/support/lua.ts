import { spawnSync } from "node:child_process";

/**
 * Runs Argo CD resource health scripts in a real Lua 5.1 interpreter (Debian's
 * `lua5.1`; `.ci/run` installs it when missing). Argo CD runs them in gopher-lua, a
 * Lua 5.1 VM: PUC Lua 5.1 refuses the same 5.2+ syntax (`goto`, `//`, bit operators)
 * and has the same number semantics (no integer subtype), which a 5.3 VM such as
 * fengari would accept silently. The libraries Argo CD does not open for health
 * scripts (io, os, debug, package/require, file loading) are removed before the
 * script runs, so a script that needs them fails here as it would there.
 */

/** Argo CD's health statuses. */
export const ARGO_HEALTH_STATUSES = [
  "Healthy",
  "Progressing",
  "Degraded",
  "Suspended",
  "Missing",
  "Unknown",
] as const;

/** What a health script returned. */
export interface HealthResult {
  status: string;
  message: string;
}

/** The interpreter's command; overridable with AIDC_LUA. */
export function luaCommand(): string {
  return process.env.AIDC_LUA ?? "lua5.1";
}

/** A Lua string literal for any string (UTF-8 bytes pass through as they are). */
function luaString(s: string): string {
  return `"${s.replace(/[\\"\n\r\0]/g, (c) => ({ "\\": "\\\\", '"': '\\"', "\n": "\\n", "\r": "\\r", "\0": "\\0" })[c] ?? c)}"`;
}

/** A Lua table constructor for a JSON-like value, as Argo CD converts `obj`. */
export function toLua(value: unknown): string {
  if (value === null || value === undefined) return "nil";
  if (typeof value === "boolean") return value ? "true" : "false";
  if (typeof value === "number") {
    if (!Number.isFinite(value)) throw new Error(`not a JSON number: ${value}`);
    return String(value);
  }
  if (typeof value === "string") return luaString(value);
  if (Array.isArray(value)) return `{${value.map(toLua).join(", ")}}`;
  if (typeof value === "object") {
    const fields = Object.entries(value as Record<string, unknown>).map(
      ([k, v]) => `[${luaString(k)}] = ${toLua(v)}`,
    );
    return `{${fields.join(", ")}}`;
  }
  throw new Error(`cannot convert ${typeof value} to Lua`);
}

/** A long-bracket Lua string holding `text` verbatim. */
function longString(text: string): string {
  let level = "";
  while (text.includes(`]${level}]`)) level += "=";
  return `[${level}[\n${text}]${level}]`;
}

/**
 * Runs `script` as Argo CD does (a chunk with the global `obj`, whose returned table
 * has `status` and `message`) and returns the result. Throws with the interpreter's
 * error when the script does not compile or fails.
 */
export function runHealthScript(script: string, obj: unknown): HealthResult {
  const program = [
    "local write, compile = io.write, loadstring",
    "io, os, debug, package, require, dofile, loadfile, loadstring, load = nil, nil, nil, nil, nil, nil, nil, nil, nil",
    `obj = ${toLua(obj)}`,
    `local chunk = assert(compile(${longString(script)}, "=health.lua"))`,
    "local hs = chunk()",
    'assert(type(hs) == "table", "the script returned no table")',
    'write(tostring(hs.status), "\\n", tostring(hs.message))',
  ].join("\n");
  const run = spawnSync(luaCommand(), ["-"], { input: program, encoding: "utf8" });
  if (run.error) {
    throw new Error(
      `cannot run ${luaCommand()} (${run.error.message}): install Lua 5.1 (apt-get install lua5.1) or set AIDC_LUA`,
    );
  }
  if (run.status !== 0) throw new Error(`health script failed: ${run.stderr.trim()}`);
  const newline = run.stdout.indexOf("\n");
  return { status: run.stdout.slice(0, newline), message: run.stdout.slice(newline + 1) };
}
