import { readFile } from "node:fs/promises";
import { ConfigError } from "./load.js";
import type { OperatorConfig } from "./schema.js";
import { API_KEY_ENV } from "./settings.js";

/**
 * The service client's `apiKey` option: resolves the current key. `refresh()` reads the
 * source again at once; `watch()` keeps the key current by itself and tells it to its
 * holder (see {@link apiKeyReader}).
 */
export interface ApiKeyReader {
  (): Promise<string>;
  refresh(): Promise<void>;
  /**
   * Reads the source every refresh interval, so that a new key is noticed within one
   * interval even while no request is made; requests then take the key last read and
   * never read the source themselves. `use` (the service client's `useApiKey`) is told
   * the key last read at once and every new key a read finds, before `onChange`, so its
   * holder need not ask for it. Returns a function that stops it.
   */
  watch(use?: (key: string) => void): () => void;
}

/** How an {@link apiKeyReader} reads its key and reports a change. */
export interface ApiKeyReaderOptions {
  /** Where `AIDC_API_KEY` is looked up. Default `process.env`. */
  env?: Record<string, string | undefined>;
  /** How long a key read from the file is used. Default `service.apiKeyRefreshMs`. */
  refreshMs?: number;
  /** Called when a read finds a key other than the one read before (never with the key). */
  onChange?: () => void;
  /** Reads the key file. Default `fs.readFile` (tests count the reads). */
  readKeyFile?: (path: string) => Promise<string>;
  /**
   * Told each key the source gives, before any caller gets it (the logger's redactor:
   * whatever quotes the key later is blanked for as long as it is current, and a while
   * after a rotation).
   */
  redactor?: { keep(source: string, secret: string): void };
}

/** The source the redactor keeps the key of. */
const KEY_SOURCE = "service.apiKey";

/**
 * Returns the key from `AIDC_API_KEY` or, when that is unset, from
 * `service.apiKeyFile`, so a rotated Secret (kubelet updates the mounted file) takes
 * effect without a restart. The file is read once per refresh interval: by the
 * watcher when one runs (`watch()`), else by the first request that finds the last
 * read `refreshMs` old (requests arriving meanwhile share that read). Every read that
 * finds a key other than the one read before calls `onChange`: whichever read sees a
 * change first, no change in between two reads goes unnoticed. The key is never logged.
 */
export function apiKeyReader(
  config: OperatorConfig,
  options: ApiKeyReaderOptions = {},
): ApiKeyReader {
  const {
    env = process.env,
    refreshMs = config.service.apiKeyRefreshMs,
    onChange,
    readKeyFile = (path: string) => readFile(path, "utf8"),
    redactor,
  } = options;
  const fromEnv = env[API_KEY_ENV];
  if (fromEnv) {
    const key = fromEnv.trim();
    redactor?.keep(KEY_SOURCE, key);
    const fixed = async () => key;
    const watch = (use?: (key: string) => void) => {
      use?.(key);
      return () => undefined;
    };
    return Object.assign(fixed, { refresh: async () => undefined, watch });
  }
  const file = config.service.apiKeyFile;
  if (!file)
    throw new ConfigError(`service.apiKeyFile: no API key configured (or set ${API_KEY_ENV})`);
  let cached: { key: string; at: number } | undefined;
  let loading: Promise<string> | undefined;
  let watched = false;
  let tell: ((key: string) => void) | undefined;
  const load = (): Promise<string> => {
    loading ??= (async () => {
      try {
        const key = (await readKeyFile(file)).trim();
        redactor?.keep(KEY_SOURCE, key);
        const before = cached?.key;
        cached = { key, at: Date.now() };
        if (before !== key) tell?.(key);
        if (before !== undefined && before !== key) onChange?.();
        return key;
      } finally {
        loading = undefined;
      }
    })();
    return loading;
  };
  const read = async () =>
    cached && (watched || Date.now() - cached.at < refreshMs) ? cached.key : await load();
  const watch = (use?: (key: string) => void) => {
    watched = true;
    tell = use;
    if (cached) use?.(cached.key);
    const stop = rereadEvery(load, refreshMs);
    return () => {
      stop();
      watched = false;
      tell = undefined;
    };
  };
  return Object.assign(read, {
    refresh: async () => {
      await load();
    },
    watch,
  });
}

/**
 * Calls `load` (a mounted Secret's reader) every `ms` until the returned function is
 * called; a failed read (the kubelet swapping the files) waits for the next. The timer
 * keeps no process alive.
 */
export function rereadEvery(load: () => Promise<unknown>, ms: number): () => void {
  const timer = setInterval(() => {
    load().catch(() => undefined);
  }, ms);
  timer.unref();
  return () => clearInterval(timer);
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
