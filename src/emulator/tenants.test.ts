import { afterEach, describe, expect, it } from "vitest";
import { ServiceClient } from "../service/client.js";
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
