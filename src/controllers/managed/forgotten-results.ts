/**
 * When a subscription result reads as forgotten, so that the create's client token must
 * find its resource: the service answers the key as unknown (an envelope 404), or, as a
 * service that answers every unknown id with a 500 may, fails it with a 5xx
 * {@link FAILED_POLLS_FOR_LOOKUP} polls in a row (each poll already retried by the
 * client). Without the bound such a key would be polled for ever, and a deletion waiting
 * for it would never end. Counted in memory per object and key: a restart counts anew.
 */
import { ServiceNotFoundError, ServiceUnavailableError } from "../../service/errors.js";

/** Polls in a row that fail with a 5xx before the result counts as forgotten. */
export const FAILED_POLLS_FOR_LOOKUP = 3;

const failedPolls = new Map<string, number>();

/**
 * Whether the poll of `key` for the object `objectKey`, which failed with `err`, leaves
 * the result forgotten (see the module comment); a true answer forgets the count.
 */
export function resultForgotten(objectKey: string, key: string, err: unknown): boolean {
  if (err instanceof ServiceNotFoundError) return true;
  const id = `${objectKey}/${key}`;
  if (!(err instanceof ServiceUnavailableError) || (err.code ?? 0) < 500) {
    failedPolls.delete(id);
    return false;
  }
  const failed = (failedPolls.get(id) ?? 0) + 1;
  if (failed < FAILED_POLLS_FOR_LOOKUP) {
    failedPolls.set(id, failed);
    return false;
  }
  failedPolls.delete(id);
  return true;
}

/** The poll of `key` for `objectKey` was answered: failures before it no longer count. */
export function resultAnswered(objectKey: string, key: string): void {
  failedPolls.delete(`${objectKey}/${key}`);
}
