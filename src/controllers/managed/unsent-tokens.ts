/**
 * Tokens of creates whose pending marker write failed in this process, so the create
 * was never sent (the marker may still have landed). Tokens are random per create, so a
 * marker carrying one is safe to drop and create anew (lookup.ts). Bounded: the oldest
 * go first.
 */
const unsentTokens = new Set<string>();
const MAX_UNSENT_TOKENS = 10_000;

/** Remembers that the create of `token` was never sent (order.ts). */
export function rememberUnsent(token: string): void {
  unsentTokens.add(token);
  if (unsentTokens.size > MAX_UNSENT_TOKENS) {
    const oldest = unsentTokens.values().next().value;
    if (oldest !== undefined) unsentTokens.delete(oldest);
  }
}

/**
 * True once for `token` when its create's pending marker write failed in this process
 * (the create was never sent); the token is forgotten.
 */
export function takeUnsentToken(token: string): boolean {
  return unsentTokens.delete(token);
}
