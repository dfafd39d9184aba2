/**
 * What a kind remembers of one account across reconciles. `ManagedKind.connect` runs
 * once per reconcile with that reconcile's view of the account's client; what must
 * outlive it (a list snapshot, when parts were last read) is kept per account, keyed
 * on the account the view belongs to, so it never mixes two accounts' answers.
 */
import type { Connection } from "./external-client.js";

/** `make`'s value for the account of `conn`, made with the account's first reconcile. */
export function perAccount<M>(make: () => M): (conn: Connection) => M {
  const memory = new WeakMap<object, M>();
  return (conn) => {
    const account = conn.service.account;
    let kept = memory.get(account);
    if (kept === undefined) {
      kept = make();
      memory.set(account, kept);
    }
    return kept;
  };
}
