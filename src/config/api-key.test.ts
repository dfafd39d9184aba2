import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { apiKeyReader } from "./api-key.js";
import { operatorConfigSchema } from "./schema.js";

const REFRESH_MS = 10_000;
const config = operatorConfigSchema.parse({
  service: {
    baseUrl: "https://aidc.invalid",
    apiKeyFile: "/var/run/secrets/aidc/api-key",
    apiKeyRefreshMs: REFRESH_MS,
  },
});

/** A key file in memory that counts its reads. */
function keyFile(key = "first") {
  const file = { key, reads: 0, changes: 0 };
  const reader = apiKeyReader(config, {
    env: {},
    onChange: () => file.changes++,
    readKeyFile: async () => {
      file.reads++;
      return `${file.key}\n`;
    },
  });
  return { file, reader };
}

/** `n` requests at once, each asking for the key. */
const requests = (read: () => Promise<string>, n: number) =>
  Promise.all(Array.from({ length: n }, () => read()));

describe("the API key file is read once per refresh interval", () => {
  beforeEach(() => {
    vi.useFakeTimers({ now: 0 });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("by the watcher alone while it runs, however many requests come", async () => {
    const { file, reader } = keyFile();
    expect(await reader()).toBe("first"); // the check at start
    // The watcher starts once the manager runs, a little later than that first read
    // (and its timer fires late under load): a request between the key turning one
    // interval old and the watcher's next read read the file on top of the watcher.
    await vi.advanceTimersByTimeAsync(500);
    const stop = reader.watch();
    for (let elapsed = 0; elapsed < 60_000; elapsed += 250) {
      await vi.advanceTimersByTimeAsync(250);
      await requests(reader, 5);
    }
    expect(file.reads).toBe(1 + 60_000 / REFRESH_MS);
    stop();
  });

  it("notices a new key within one interval without any request, and reports it", async () => {
    const { file, reader } = keyFile();
    await reader();
    const stop = reader.watch();
    file.key = "rotated";
    await vi.advanceTimersByTimeAsync(REFRESH_MS);
    expect(file.changes).toBe(1);
    expect(await reader()).toBe("rotated");
    stop();
  });

  it("without a watcher, by the first request that finds the key stale; the others share its read", async () => {
    const { file, reader } = keyFile();
    expect(await requests(reader, 20)).toEqual(Array(20).fill("first"));
    expect(file.reads).toBe(1);
    await vi.advanceTimersByTimeAsync(REFRESH_MS - 1);
    await requests(reader, 20);
    expect(file.reads).toBe(1);
    file.key = "rotated";
    await vi.advanceTimersByTimeAsync(1);
    expect(await requests(reader, 20)).toEqual(Array(20).fill("rotated"));
    expect(file.reads).toBe(2);
    expect(file.changes).toBe(1);
  });

  it("goes back to reading on requests once the watcher stops", async () => {
    const { file, reader } = keyFile();
    await reader();
    reader.watch()();
    await vi.advanceTimersByTimeAsync(REFRESH_MS);
    await reader();
    expect(file.reads).toBe(2);
  });
});

describe("every key the source gives is kept by the redactor before a read returns it", () => {
  const redactor = () => {
    const kept: string[] = [];
    return {
      kept,
      keep: (source: string, secret: string) => void kept.push(`${source}=${secret}`),
    };
  };

  it("the key of AIDC_API_KEY, trimmed, once: when the reader is made", async () => {
    const r = redactor();
    const read = apiKeyReader(config, { env: { AIDC_API_KEY: " from-env \n" }, redactor: r });
    expect(r.kept).toEqual(["service.apiKey=from-env"]);
    expect(await read()).toBe("from-env");
    expect(await read()).toBe("from-env");
    expect(r.kept).toEqual(["service.apiKey=from-env"]);
  });

  it("the key of the file at each read of the file, not at each request", async () => {
    vi.useFakeTimers({ now: 0 });
    try {
      const r = redactor();
      let key = "first";
      const read = apiKeyReader(config, {
        env: {},
        redactor: r,
        readKeyFile: async () => key,
      });
      await read();
      await read();
      expect(r.kept).toEqual(["service.apiKey=first"]);
      key = "rotated";
      await vi.advanceTimersByTimeAsync(REFRESH_MS);
      expect(await read()).toBe("rotated");
      expect(r.kept).toEqual(["service.apiKey=first", "service.apiKey=rotated"]);
    } finally {
      vi.useRealTimers();
    }
  });
});

describe("the key's holder (the service client) is told the key, not asked for it", () => {
  beforeEach(() => {
    vi.useFakeTimers({ now: 0 });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("of the file: the key last read when the watch starts, then each new key before onChange", async () => {
    const told: string[] = [];
    const file = { key: "first" };
    const reader = apiKeyReader(config, {
      env: {},
      onChange: () => told.push("changed"),
      readKeyFile: async () => file.key,
    });
    await reader();
    const stop = reader.watch((key) => told.push(key));
    expect(told).toEqual(["first"]);
    await vi.advanceTimersByTimeAsync(REFRESH_MS);
    expect(told).toEqual(["first"]);
    file.key = "rotated";
    await vi.advanceTimersByTimeAsync(REFRESH_MS);
    expect(told).toEqual(["first", "rotated", "changed"]);
    stop();
    file.key = "third";
    await vi.advanceTimersByTimeAsync(REFRESH_MS);
    await reader();
    expect(told).toEqual(["first", "rotated", "changed", "changed"]);
  });

  it("of AIDC_API_KEY: the key when the watch starts", () => {
    const told: string[] = [];
    apiKeyReader(config, { env: { AIDC_API_KEY: "from-env" } }).watch((key) => told.push(key))();
    expect(told).toEqual(["from-env"]);
  });
});
