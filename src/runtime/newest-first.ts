/**
 * A Map kept as a bounded memory of the most recently noted keys: noting a key makes it
 * the newest (Map order), and past `max` keys the oldest go first.
 */
export function noteNewest<K, V>(memory: Map<K, V>, key: K, value: V, max: number): void {
  memory.delete(key);
  memory.set(key, value);
  for (const oldest of memory.keys()) {
    if (memory.size <= max) break;
    memory.delete(oldest);
  }
}
