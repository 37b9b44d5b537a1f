import type { RestartConfig } from '../config/schema';

export interface RestartDecision {
  /** Wait this long before starting the replacement. */
  delayMs: number;
  /** More than `maxRestarts` restarts fell within `windowMs`: the pool is degraded. */
  overIntensity: boolean;
}

/**
 * OTP's restart intensity as a pure object: remembers restart times within the window and says
 * how long to wait before the next one. Backoff is `min(base * 2 ** (n - 1), max)` over the
 * restarts in the window, over the intensity too: it went straight to the maximum there, so a
 * worker that could not start for a few seconds (fork EAGAIN, a module being redeployed) came
 * back only after backoffMaxMs (30 s) from its sixth failure, 3.1 s in; now 3.2 s, then 6.4 s…
 */
export class RestartPolicy {
  #config: RestartConfig;
  #times: number[] = [];

  constructor(config: RestartConfig) {
    this.#config = config;
  }

  /** Records a restart at `now` (ms) and decides its delay. */
  next(now: number): RestartDecision {
    this.#times = this.#times.filter((time) => now - time < this.#config.windowMs);
    this.#times.push(now);
    const n = this.#times.length;
    const overIntensity = n > this.#config.maxRestarts;
    const delayMs = Math.min(this.#config.backoffBaseMs * 2 ** (n - 1), this.#config.backoffMaxMs);
    return { delayMs, overIntensity };
  }

  /** True while more than `maxRestarts` restarts lie within the window ending at `now`. */
  isOverIntensity(now: number): boolean {
    return this.#times.filter((time) => now - time < this.#config.windowMs).length > this.#config.maxRestarts;
  }

  get recent(): number {
    return this.#times.length;
  }
}
