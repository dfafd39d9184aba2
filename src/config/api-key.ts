import { readFile } from "node:fs/promises";
import { ConfigError } from "./load.js";
import type { OperatorConfig } from "./schema.js";
import { API_KEY_ENV } from "./settings.js";

/**
 * The service client's `apiKey` option: returns the key from `AIDC_API_KEY` or, when
 * that is unset, from `service.apiKeyFile`, re-read at most every `refreshMs` so a
 * rotated Secret (kubelet updates the mounted file) takes effect without a restart.
 * The key is never logged.
 */
export function apiKeyReader(
  config: OperatorConfig,
  env: Record<string, string | undefined> = process.env,
  refreshMs = 10_000,
): () => Promise<string> {
  const fromEnv = env[API_KEY_ENV];
  if (fromEnv) return async () => fromEnv.trim();
  const file = config.service.apiKeyFile;
  if (!file)
    throw new ConfigError(`service.apiKeyFile: no API key configured (or set ${API_KEY_ENV})`);
  let cached: { key: string; at: number } | undefined;
  return async () => {
    const now = Date.now();
    if (cached && now - cached.at < refreshMs) return cached.key;
    const key = (await readFile(file, "utf8")).trim();
    cached = { key, at: now };
    return key;
  };
}

/** Reads the key once at start; throws {@link ConfigError} naming the field when unusable. */
export async function checkApiKey(
  read: () => Promise<string>,
  config: OperatorConfig,
): Promise<void> {
  let key: string;
  try {
    key = await read();
  } catch (err) {
    throw new ConfigError(
      `service.apiKeyFile: cannot read ${config.service.apiKeyFile}: ${(err as Error).message}`,
    );
  }
  if (!key) throw new ConfigError(`service.apiKeyFile: ${config.service.apiKeyFile} is empty`);
}

/**
 * Polls the key every `intervalMs` and calls `onChange` when it differs from the last
 * one read (never passing the key on). Returns a function that stops polling.
 */
export function watchApiKey(
  read: () => Promise<string>,
  onChange: () => void,
  intervalMs = 30_000,
): () => void {
  let last: string | undefined;
  let stopped = false;
  const poll = async () => {
    try {
      const key = await read();
      if (last !== undefined && key !== last && !stopped) onChange();
      last = key;
    } catch {
      // Unreadable for a moment (the kubelet swaps the file): try again next time.
    }
  };
  void poll();
  const timer = setInterval(() => void poll(), intervalMs);
  timer.unref();
  return () => {
    stopped = true;
    clearInterval(timer);
  };
}
