import { z } from 'zod';

/**
 * The longest delay Node's timers keep, ms (2^31 - 1, about 24.8 days): a longer one fires after
 * 1 ms with a TimeoutOverflowWarning. A `callTimeoutMs` of 3,000,000,000 timed every call out at
 * once, "past its 3000000000 ms deadline".
 */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * A duration setting in whole ms, `min` (0 where 0 means "off" or "never") up to MAX_TIMER_MS.
 * `.default()` it at the field.
 */
export function timerMs(min: 0 | 1 = 1): z.ZodNumber {
  return z
    .number()
    .int()
    .min(min)
    .max(MAX_TIMER_MS, `at most ${MAX_TIMER_MS} ms (about 24.8 days), the longest timer Node.js keeps`);
}

/** A delay computed from settings (a timeout plus a slack), kept within what a timer takes. */
export function clampTimerMs(ms: number): number {
  return Math.min(ms, MAX_TIMER_MS);
}
