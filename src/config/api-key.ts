import { readFile } from "node:fs/promises";
import { ConfigError } from "./load.js";
import type { OperatorConfig } from "./schema.js";
import { API_KEY_ENV } from "./settings.js";

/**
 * The service client's `apiKey` option: resolves the current key. `refresh()` reads the
 * source again at once (the watcher calls it every refresh interval).
 */
export interface ApiKeyReader {
  (): Promise<string>;
  refresh(): Promise<void>;
}

/**
 * Returns the key from `AIDC_API_KEY` or, when that is unset, from
 * `service.apiKeyFile`, read again when the last read is `refreshMs` old (default
 * `service.apiKeyRefreshMs`), so a rotated Secret (kubelet updates the mounted file)
 * takes effect without a restart. Every read that finds a key other than the one read
 * before calls `onChange` (never with the key): whichever read sees a change first,
 * a request's or the watcher's, no change in between two reads goes unnoticed. The
 * key is never logged.
 */
export function apiKeyReader(
  config: OperatorConfig,
  env: Record<string, string | undefined> = process.env,
  refreshMs = config.service.apiKeyRefreshMs,
  onChange?: () => void,
): ApiKeyReader {
  const fromEnv = env[API_KEY_ENV];
  if (fromEnv) {
    const fixed = async () => fromEnv.trim();
    return Object.assign(fixed, { refresh: async () => undefined });
  }
  const file = config.service.apiKeyFile;
  if (!file)
    throw new ConfigError(`service.apiKeyFile: no API key configured (or set ${API_KEY_ENV})`);
  let cached: { key: string; at: number } | undefined;
  const load = async (): Promise<string> => {
    const key = (await readFile(file, "utf8")).trim();
    const before = cached?.key;
    cached = { key, at: Date.now() };
    if (before !== undefined && before !== key) onChange?.();
    return key;
  };
  const read = async () => {
    if (cached && Date.now() - cached.at < refreshMs) return cached.key;
    return load();
  };
  return Object.assign(read, {
    refresh: async () => {
      await load();
    },
  });
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
 * Reads the key again every `intervalMs` (the reader's `onChange` reports a change),
 * so a new key is noticed within one interval even while no request is made. Returns
 * a function that stops it.
 */
export function watchApiKey(reader: ApiKeyReader, intervalMs: number): () => void {
  const timer = setInterval(() => {
    // Unreadable for a moment (the kubelet swaps the file): try again next time.
    reader.refresh().catch(() => undefined);
  }, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
