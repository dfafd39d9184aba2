/**
 * A change the service makes once per identity (a file system's mount on an instance, a
 * volume's attachment to one, a port opened on a pod), planned on a read that may be
 * stale: a call whose answer was lost (a process stopped with it under way) may have made
 * it since. Its refusal is read again, and the change found made stands for it; else the
 * refusal stands. Never a second send.
 */
import { ServiceNotFoundError, ServiceRefusedError } from "../../service/errors.js";

/** What {@link sendOrFindMade} did: sent the change, or found it made (`found` names it). */
export type ChangeSent<T> = { sent: T } | { found: string };

/** Sends the change; after a refusal, `findMade` reads again and names it if it is made. */
export async function sendOrFindMade<T>(
  send: () => Promise<T>,
  findMade: () => Promise<string | undefined>,
): Promise<ChangeSent<T>> {
  try {
    return { sent: await send() };
  } catch (err) {
    if (!(err instanceof ServiceRefusedError) || err instanceof ServiceNotFoundError) throw err;
    const found = await findMade();
    if (found === undefined) throw err;
    return { found };
  }
}
