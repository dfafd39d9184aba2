/**
 * A typed client of the emulator's admin API, for tests, benchmarks and chaos scripts
 * that run the emulator in another process (in-process code may use `RunningEmulator`
 * directly). Uses the global fetch: the emulator is not the service client.
 */
import type { FaultRule, FaultRuleInput } from "./faults.js";
import type { RequestLogEntry, RequestLogQuery } from "./request-log.js";
import type { SeedInput, SeedResult } from "./seeding.js";
import type { EmulatorBehaviour } from "./state.js";

/** The admin view of the state: wire shapes of every resource (see admin-api.ts). */
export interface EmulatorSnapshot {
  tasks: Record<string, unknown>[];
  nas: Record<string, unknown>[];
  templates: Record<string, unknown>[];
  cci: Record<string, unknown>[];
  subscriptions: {
    key: string;
    kind: string;
    state: string;
    instanceId?: string;
    message?: string;
  }[];
  volumes: Record<string, unknown>[];
  /** File systems, each with its `mounts`. */
  fileSystems: Record<string, unknown>[];
  trainingProducts: Record<string, unknown>[];
  nasProducts: Record<string, unknown>[];
}

/** A change of a task's remote state. */
export interface TaskStatePatch {
  status?: string;
  info?: string;
  restartCount?: number;
  containerReason?: string;
}

/** A change of a NAS's remote state. */
export interface NasStatePatch {
  status?: string;
  usedGB?: number;
  quotaGB?: number;
  description?: string;
}

/** A change of a volume's remote state: `instanceId` null detaches it. */
export interface VolumeStatePatch {
  status?: string;
  instanceId?: string | null;
}

/** A change of a CCI instance's remote state. */
export interface CciStatePatch {
  status?: string;
  subStatus?: string;
  fields?: Record<string, unknown>;
  errorDetails?: {
    instanceStatus?: string;
    instanceSubStatus?: string;
    errorDescription?: string;
    suggestion?: string;
    errorDetail?: string;
  } | null;
  saveImageStatus?: boolean;
}

/** Behaviour changes (the base path is fixed at start), and the accepted API key. */
export type EmulatorConfigPatch = Partial<Omit<EmulatorBehaviour, "basePath">> & {
  apiKey?: string;
};

/** Thrown when the admin API answers an error; the message is the emulator's. */
export class EmulatorAdminError extends Error {
  constructor(
    readonly httpStatus: number,
    message: string,
  ) {
    super(message);
    this.name = "EmulatorAdminError";
  }
}

/** The admin API of the emulator at `baseUrl`. */
export class EmulatorAdmin {
  private readonly base: string;

  constructor(baseUrl: string) {
    this.base = `${baseUrl.replace(/\/+$/, "")}/_admin`;
  }

  /** Resolves when the emulator answers. */
  async health(): Promise<void> {
    await this.request("GET", "/health");
  }

  /** Every resource as the service shows it, to the account `tenant` (default: `default`). */
  state(tenant?: string): Promise<EmulatorSnapshot> {
    const suffix = tenant ? `?tenant=${encodeURIComponent(tenant)}` : "";
    return this.request("GET", `/state${suffix}`) as Promise<EmulatorSnapshot>;
  }

  /**
   * Adds the account `tenant` with its own key and world, or gives it a new key (the
   * old one is refused from then on); see src/emulator/tenants.ts.
   */
  async setTenant(tenant: string, apiKey: string): Promise<void> {
    await this.request("POST", "/tenants", { tenant, apiKey });
  }

  /** Back to the fixtures; clears faults and the request log. */
  async reset(): Promise<void> {
    await this.request("POST", "/reset");
  }

  /** Adds resources and catalog entries, to the account `tenant` (default: `default`); returns the ids created. */
  seed(input: SeedInput, tenant?: string): Promise<SeedResult> {
    const suffix = tenant ? `?tenant=${encodeURIComponent(tenant)}` : "";
    return this.request("POST", `/seed${suffix}`, input) as Promise<SeedResult>;
  }

  /** Changes a task's remote state. */
  async setTaskState(id: string, patch: TaskStatePatch): Promise<void> {
    await this.request("PATCH", `/tasks/${encodeURIComponent(id)}`, patch);
  }

  /** Changes a NAS's remote state. */
  async setNasState(id: string, patch: NasStatePatch): Promise<void> {
    await this.request("PATCH", `/nas/${encodeURIComponent(id)}`, patch);
  }

  /** Changes a CCI instance's remote state. */
  async setCciState(id: string, patch: CciStatePatch): Promise<void> {
    await this.request("PATCH", `/cci/${encodeURIComponent(id)}`, patch);
  }

  /** Changes a volume's remote state (e.g. attached elsewhere by someone else). */
  async setVolumeState(id: string, patch: VolumeStatePatch): Promise<void> {
    await this.request("PATCH", `/volumes/${encodeURIComponent(id)}`, patch);
  }

  /** Resolves a subscription now as Succeeded or Failed. */
  async resolveSubscription(
    key: string,
    state: "Succeeded" | "Failed",
    message?: string,
  ): Promise<void> {
    await this.request("PATCH", `/subscriptions/${encodeURIComponent(key)}`, {
      state,
      ...(message === undefined ? {} : { message }),
    });
  }

  /** Replaces the fault rules. */
  async setFaults(rules: FaultRuleInput[]): Promise<FaultRule[]> {
    return ((await this.request("PUT", "/faults", { rules })) as { rules: FaultRule[] }).rules;
  }

  /** The active fault rules. */
  async faults(): Promise<FaultRule[]> {
    return ((await this.request("GET", "/faults")) as { rules: FaultRule[] }).rules;
  }

  /** Removes every fault rule. */
  async clearFaults(): Promise<void> {
    await this.request("DELETE", "/faults");
  }

  /** Logged service requests matching `q`, oldest first. */
  async requests(q: RequestLogQuery = {}): Promise<RequestLogEntry[]> {
    const params = new URLSearchParams();
    for (const [k, v] of Object.entries(q)) if (v !== undefined) params.set(k, String(v));
    const suffix = params.size > 0 ? `?${params}` : "";
    return ((await this.request("GET", `/requests${suffix}`)) as { entries: RequestLogEntry[] })
      .entries;
  }

  /** Empties the request log. */
  async clearRequests(): Promise<void> {
    await this.request("DELETE", "/requests");
  }

  /** The current behaviour. */
  config(): Promise<EmulatorBehaviour> {
    return this.request("GET", "/config") as Promise<EmulatorBehaviour>;
  }

  /** Changes behaviour (delays, HTTP status mode) or the accepted API key. */
  configure(patch: EmulatorConfigPatch): Promise<EmulatorBehaviour> {
    return this.request("PATCH", "/config", patch) as Promise<EmulatorBehaviour>;
  }

  private async request(method: string, path: string, body?: unknown): Promise<unknown> {
    const res = await fetch(this.base + path, {
      method,
      ...(body === undefined
        ? {}
        : { body: JSON.stringify(body), headers: { "Content-Type": "application/json" } }),
    });
    const text = await res.text();
    const parsed: unknown = text ? JSON.parse(text) : undefined;
    if (!res.ok) {
      const error = (parsed as { error?: string } | undefined)?.error ?? text;
      throw new EmulatorAdminError(
        res.status,
        `emulator admin ${method} ${path}: ${res.status} ${error}`,
      );
    }
    return parsed;
  }
}
