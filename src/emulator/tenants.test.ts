import { afterEach, describe, expect, it } from "vitest";
import { ServiceClient } from "../service/client.js";
import { isServiceId } from "../service/schemas/primitives.js";
import { EmulatorAdmin } from "./admin-client.js";
import { defaultNasProducts } from "./fixtures.js";
import { type RunningEmulator, startEmulator } from "./server.js";

const NAS_PRODUCT = defaultNasProducts()[0]?.productCode ?? "";
const KEY_A = "tenant-a-key-0123456789";
const KEY_B = "tenant-b-key-0123456789";

describe("an emulator with several accounts", () => {
  let emulator: RunningEmulator | undefined;
  afterEach(async () => {
    await emulator?.stop();
  });
  const client = (url: string, key: string) =>
    new ServiceClient({
      baseUrl: url,
      apiKey: () => key,
      rateLimit: null,
      retry: { maxAttempts: 1, baseDelayMs: 1, maxDelayMs: 1 },
    });

  it("keeps each account's objects invisible to and untouchable by another account's key", async () => {
    emulator = await startEmulator({
      apiKey: KEY_A,
      subscriptionDelayMs: 0,
      tenants: [{ name: "b", apiKey: KEY_B }],
    });
    const a = client(emulator.url, KEY_A);
    const b = client(emulator.url, KEY_B);
    await a.subscribeNas({
      productCode: NAS_PRODUCT,
      storageParams: { name: "data-a", storageCapacity: 100, mountPath: "/mnt/a" },
    });
    const nasA = emulator.tenants.get("default").state.nas;
    expect(nasA.size).toBe(1);
    const id = [...nasA.keys()][0] as string;
    expect(emulator.tenants.get("b").state.nas.size).toBe(0);
    await expect(b.getNas(id)).rejects.toMatchObject({ code: 404 });
    expect((await a.getNas(id)).id).toBe(id);
    const admin = new EmulatorAdmin(emulator.url);
    expect((await admin.state("b")).nas).toEqual([]);
    expect((await admin.state()).nas).toHaveLength(1);
    const log = await admin.requests({ endpoint: "getNas" });
    expect(log.map((e) => e.tenant)).toEqual(["b", "default"]);
    a.close();
    b.close();
  });

  it("adds an account and rotates its key through the admin API", async () => {
    emulator = await startEmulator({ apiKey: KEY_A });
    const admin = new EmulatorAdmin(emulator.url);
    const b = client(emulator.url, KEY_B);
    await expect(b.listTrainingProducts()).rejects.toMatchObject({ code: 403 });
    await admin.setTenant("b", KEY_B);
    expect((await b.listTrainingProducts()).length).toBeGreaterThan(0);
    await admin.setTenant("b", "tenant-b-key-rotated-000");
    await expect(client(emulator.url, KEY_B).listNasProducts()).rejects.toMatchObject({
      code: 403,
    });
    await expect(admin.setTenant("c", KEY_A)).rejects.toThrow(/already the key of tenant default/);
    b.close();
  });
});

describe("the ids an emulator makes", () => {
  const emulators: RunningEmulator[] = [];
  afterEach(async () => {
    for (const e of emulators.splice(0)) await e.stop();
  });
  const start = async (options: Partial<Parameters<typeof startEmulator>[0]> = {}) => {
    const e = await startEmulator({
      apiKey: KEY_A,
      subscriptionDelayMs: 0,
      tenants: [{ name: "b", apiKey: KEY_B }],
      ...options,
    });
    emulators.push(e);
    return e;
  };
  const firstNasId = async (e: RunningEmulator, key: string) => {
    const c = new ServiceClient({ baseUrl: e.url, apiKey: () => key, rateLimit: null });
    await c.subscribeNas({ productCode: NAS_PRODUCT });
    c.close();
    const tenant = key === KEY_A ? "default" : "b";
    return [...e.tenants.get(tenant).state.nas.keys()][0] as string;
  };

  it("differ between two emulators, each carrying its own random tag, and stay service ids", async () => {
    const one = await start();
    const two = await start();
    expect(one.idTag).toMatch(/^[a-z0-9]{5}$/);
    expect(one.idTag).not.toBe(two.idTag);
    const ids = [
      await firstNasId(one, KEY_A),
      await firstNasId(two, KEY_A),
      await firstNasId(one, KEY_B),
    ];
    expect(ids).toEqual([
      `nas-${one.idTag}-000001`,
      `nas-${two.idTag}-000001`,
      `nas-${one.idTag}-b-000001`,
    ]);
    for (const id of ids) expect(isServiceId(id)).toBe(true);
  });

  it("follow a pinned tag, and none when it is empty", async () => {
    expect(await firstNasId(await start({ idTag: "run7" }), KEY_B)).toBe("nas-run7-b-000001");
    const untagged = await start({ idTag: "" });
    expect(await firstNasId(untagged, KEY_A)).toBe("nas-000001");
    expect(await firstNasId(untagged, KEY_B)).toBe("nas-b-000001");
  });

  it("refuses a tag or an account name that would make an id no service id", async () => {
    await expect(start({ idTag: "a/b" })).rejects.toThrow(/idTag must be at most 16 letters/);
    await expect(start({ idTag: "x".repeat(17) })).rejects.toThrow(/idTag/);
    const e = await start({ tenants: [] });
    const admin = new EmulatorAdmin(e.url);
    await expect(admin.setTenant("../x", KEY_B)).rejects.toThrow(/400|tenant/);
    await expect(admin.setTenant("x".repeat(33), KEY_B)).rejects.toThrow(/400|tenant/);
    expect(() => e.tenants.set("a b", KEY_B)).toThrow(/tenant name is 1 to 32/);
    expect(e.tenants.names()).toEqual(["default"]);
  });
});
