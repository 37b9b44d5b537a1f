/** Promises raced against what ends a wait: a signal, or a point in time. */

/** `work`, or `signal`'s reason as soon as it aborts (`work` then settles unobserved). */
export function raceSignal<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  work.catch(() => {});
  if (signal.aborted) return Promise.reject(signal.reason);
  let onAbort: () => void = () => {};
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
  });
  aborted.catch(() => {});
  return Promise.race([work, aborted]).finally(() => signal.removeEventListener('abort', onAbort));
}

/** `work`'s value, or undefined once `at` (a performance.now() time) passes first (`work` then settles unobserved). */
export async function beforeTime<T>(work: Promise<T>, at: number): Promise<T | undefined> {
  work.catch(() => {});
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), Math.max(0, at - performance.now()));
  });
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}
