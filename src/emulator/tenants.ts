/**
 * The accounts of the emulated service (a mode for multi-tenant tests): each API key
 * belongs to one account (tenant), and each account has a world of its own, so the
 * objects of tenant A are invisible to, and untouchable by, tenant B's key (they answer
 * as unknown ids). The emulator's own key is the account `default`, whose world is the
 * emulator's `state`; more accounts come from the start options or the admin API
 * (`POST /_admin/tenants {tenant, apiKey}`), which also rotates an account's key. Ids
 * carry the account's tag, so they are unique across accounts as a real service's are.
 */
import { EmulatorState } from "./state.js";

/** The account of the emulator's own key. */
export const DEFAULT_TENANT = "default";

/** One account: its name, its key, its world. */
export interface Tenant {
  name: string;
  apiKey: string;
  state: EmulatorState;
}

/** The accounts of one emulator, by key and by name. */
export class EmulatorTenants {
  private readonly byName = new Map<string, Tenant>();

  /** `defaultState` is the world of the default account (key `apiKey`); `newState` makes the others'. */
  constructor(
    defaultState: EmulatorState,
    apiKey: string,
    private readonly newState: (idTag: string) => EmulatorState,
  ) {
    this.byName.set(DEFAULT_TENANT, { name: DEFAULT_TENANT, apiKey, state: defaultState });
  }

  /** The account whose key is `key`, if any. */
  byKey(key: string | undefined): Tenant | undefined {
    if (!key) return undefined;
    for (const t of this.byName.values()) if (t.apiKey === key) return t;
    return undefined;
  }

  /** The account `name`; throws for an unknown one. */
  get(name: string = DEFAULT_TENANT): Tenant {
    const t = this.byName.get(name);
    if (!t) throw new Error(`no tenant ${name}`);
    return t;
  }

  /**
   * Adds account `name` with `apiKey`, or gives an existing one a new key (the old key
   * is refused from then on). A key belongs to one account only.
   */
  set(name: string, apiKey: string): Tenant {
    const owner = this.byKey(apiKey);
    if (owner && owner.name !== name) {
      throw new Error(`the key is already the key of tenant ${owner.name}`);
    }
    const existing = this.byName.get(name);
    if (existing) {
      existing.apiKey = apiKey;
      return existing;
    }
    const tenant = { name, apiKey, state: this.newState(`${name}-`) };
    this.byName.set(name, tenant);
    return tenant;
  }

  /** Every account's name. */
  names(): string[] {
    return [...this.byName.keys()];
  }
}

/** Builds the state of an extra account like the default one (behaviour, seed, clock). */
export function tenantStateLike(state: EmulatorState, seed: number, idTag: string): EmulatorState {
  return new EmulatorState({ ...state.behaviour }, seed, state.now, idTag);
}
