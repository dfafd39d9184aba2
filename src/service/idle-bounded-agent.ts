/**
 * Keep-alive agents that never reuse a socket the server may be closing.
 *
 * A server closes a keep-alive connection after its own idle timeout (Node's default:
 * 5 s). A request the client writes on that socket as the server closes it fails with
 * ECONNRESET ("socket hang up"), and for a create the outcome is then unknown. Node's
 * agent keeps an idle socket for ever unless told otherwise (`timeout` 0), and honours a
 * server's `Keep-Alive: timeout=N` hint only to shorten a timeout it already has.
 *
 * These agents close a socket idle for `idleSocketTimeoutMs`, below the server's timeout,
 * twice over: the agent's `timeout` option closes a free socket when its timer fires
 * (and lets a shorter `Keep-Alive` hint of the server win), and every new request first
 * drops the free sockets idle that long by the wall clock, so a late timer (a busy or
 * paused event loop) cannot hand out a socket past its time.
 */
import { Agent as HttpAgent } from "node:http";
import { Agent as HttpsAgent } from "node:https";
import type { Socket } from "node:net";
import type { Duplex } from "node:stream";

/** When each pooled socket last became free (ms, `performance.now()`). */
const freedAt = new WeakMap<object, number>();

type AgentClass = typeof HttpAgent;

/** An agent class whose free sockets are closed after `idleSocketTimeoutMs`. */
function idleBounded<C extends AgentClass>(Base: C, idleSocketTimeoutMs: number): C {
  // @ts-expect-error: a mixin over the agent constructor
  return class extends Base {
    override keepSocketAlive(socket: Duplex): boolean {
      freedAt.set(socket, performance.now());
      return (HttpAgent.prototype.keepSocketAlive as (s: Duplex) => boolean).call(this, socket);
    }

    addRequest(...args: unknown[]): void {
      dropStaleFreeSockets(this, idleSocketTimeoutMs, performance.now());
      const base = Base.prototype as unknown as { addRequest: (...a: unknown[]) => void };
      base.addRequest.apply(this, args);
    }
  };
}

/**
 * Destroys and unlists the free sockets of `agent` idle for `idleMs` or more at `now`
 * (and any already destroyed). Exported for tests.
 */
export function dropStaleFreeSockets(agent: HttpAgent, idleMs: number, now: number): number {
  let dropped = 0;
  for (const list of Object.values(agent.freeSockets as Record<string, Socket[] | undefined>)) {
    if (!list) continue;
    for (let i = list.length - 1; i >= 0; i--) {
      const socket = list[i] as Socket;
      const since = freedAt.get(socket);
      if (!socket.destroyed && (since === undefined || now - since < idleMs)) continue;
      list.splice(i, 1);
      socket.destroy();
      dropped++;
    }
  }
  return dropped;
}

/** The http and https keep-alive agents of one service client. */
export interface IdleBoundedAgents {
  http: HttpAgent;
  https: HttpsAgent;
}

/** Keep-alive agents (at most `maxSockets` per origin) closing sockets idle for `idleSocketTimeoutMs`. */
export function idleBoundedAgents(
  idleSocketTimeoutMs: number,
  maxSockets: number,
): IdleBoundedAgents {
  const options = { keepAlive: true, maxSockets, timeout: idleSocketTimeoutMs };
  const Http = idleBounded(HttpAgent, idleSocketTimeoutMs);
  const Https = idleBounded(HttpsAgent as unknown as AgentClass, idleSocketTimeoutMs);
  return { http: new Http(options), https: new Https(options) as unknown as HttpsAgent };
}
