/**
 * The accounts of the emulated service (a mode for multi-tenant tests): each API key
 * belongs to one account (tenant), and each account has a world of its own, so the
 * objects of tenant A are invisible to, and untouchable by, tenant B's key (they answer
 * as unknown ids). The emulator's own key is the account `default`, whose world is the
 * emulator's `state`; more accounts come from the start options or the admin API
 * (`POST /_admin/tenants {tenant, apiKey}`), which also rotates an account's key. Ids
 * carry the account's name (`nas-<emulator tag>-b-000001`), so they are unique across
 * accounts as a real service's are.
 */
import { randomInt } from "node:crypto";
import { EmulatorState } from "./state.js";

/** The account of the emulator's own key. */
export const DEFAULT_TENANT = "default";

/**
 * What an account's name may be: it goes into the account's ids, which must stay
 * service ids (src/service/schemas/primitives.ts: no `/`, `?`, `%`, white space, at most 128 characters).
 */
export const TENANT_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_-]{0,31}$/;

/** One account: its name, its key, its world. */
export interface Tenant {
  name: string;
  apiKey: string;
  state: EmulatorState;
}

/** The accounts of one emulator, by key and by name. */
export class EmulatorTenants {
  private readonly byName = new Map<string, Tenant>();

  /**
   * `defaultState` is the world of the default account (key `apiKey`); `newState` makes
   * the world of the account it is given the name of.
   */
  constructor(
    defaultState: EmulatorState,
    apiKey: string,
    private readonly newState: (name: string) => EmulatorState,
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
   * is refused from then on). A key belongs to one account only. A name is what ids
   * carry (TENANT_NAME_PATTERN).
   */
  set(name: string, apiKey: string): Tenant {
    if (!TENANT_NAME_PATTERN.test(name)) {
      throw new Error(
        `a tenant name is 1 to 32 letters, digits, _ and -, starting with a letter or digit, got ${JSON.stringify(name.slice(0, 64))}`,
      );
    }
    const owner = this.byKey(apiKey);
    if (owner && owner.name !== name) {
      throw new Error(`the key is already the key of tenant ${owner.name}`);
    }
    const existing = this.byName.get(name);
    if (existing) {
      existing.apiKey = apiKey;
      return existing;
    }
    const tenant = { name, apiKey, state: this.newState(name) };
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

/** What an emulator's id tag may be (EmulatorOptions.idTag). */
const ID_TAG_PATTERN = /^[A-Za-z0-9]{0,16}$/;

/**
 * The tag of an emulator's ids: `option` when given (letters and digits, at most 16;
 * `""` for none), else a fresh one of 5 lowercase letters and digits (36^5 ≈ 60
 * million), drawn outside the seeded random source so that it differs on every start.
 */
export function emulatorIdTag(option?: string): string {
  if (option !== undefined) {
    if (!ID_TAG_PATTERN.test(option)) {
      throw new Error(
        `idTag must be at most 16 letters and digits, got ${JSON.stringify(option.slice(0, 64))}`,
      );
    }
    return option;
  }
  const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789";
  let tag = "";
  for (let i = 0; i < 5; i++) tag += alphabet[randomInt(alphabet.length)];
  return tag;
}

/**
 * What an account's ids carry between prefix and number: the emulator's tag and, for
 * an account other than `default`, the account's name (`<tag>-b-`).
 */
export function accountIdTag(idTag: string, account?: string): string {
  return [idTag, account]
    .filter((part) => part)
    .map((part) => `${part}-`)
    .join("");
}
