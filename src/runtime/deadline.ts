/**
 * Settles as `promise` does when it settles within `ms`; else, at the deadline, as
 * `onTimeout()` does (what it returns, or what it throws), called once. `ms` ≤ 0 means
 * the deadline has already passed (`onTimeout` runs on the next turn, unless `promise`
 * has already settled). `promise` is not cancelled: a caller that must stop it does so
 * in `onTimeout` (e.g. aborts its signal); its late outcome is ignored.
 */
export async function withDeadline<T, U = T>(
  promise: Promise<T>,
  ms: number,
  onTimeout: () => U | Promise<U>,
): Promise<T | U> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<U>((resolve, reject) => {
    timer = setTimeout(
      () => {
        try {
          resolve(onTimeout());
        } catch (err) {
          reject(err);
        }
      },
      Math.max(0, ms),
    );
  });
  try {
    return await Promise.race([promise, deadline]);
  } finally {
    clearTimeout(timer);
  }
}
