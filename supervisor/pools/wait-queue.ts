import { McpvisorError } from '../../protocol/errors';

interface Waiter {
  tenant: string;
  /** Order of arrival, across tenants: ties go to the longest waiting. */
  seq: number;
  resolve(): void;
  reject(error: McpvisorError): void;
}

/** How a pool's slots are shared between sessions: what the supervisor gives each pool. */
export interface SlotSharing {
  /** Free slots kept for a session holding none of the pool's (`pools.reservedSlots`; 0: none). */
  reservedSlots: number;
  /** Sessions open now, over every transport (Supervisor.sessions). */
  openSessions(): number;
}

/** Slots a pool keeps for a tenant holding none, and what the queue needs to judge that. */
export interface SlotReservation extends SlotSharing {
  /** The pool's usable slots now (live workers × calls each). */
  slots(): number;
}

/**
 * Bounded queue of calls waiting for a free worker, fair between tenants (sessions: the pools are
 * given `PoolCallOptions.session`). A waiter leaves on abort (CANCELLED) or at its deadline
 * (TIMEOUT); a full queue answers BUSY at once, so a flood costs no memory.
 *
 * Fairness, decided here (one FIFO let a session that queued 30 slow calls make every other
 * session's call wait behind all of them, or time out):
 * - A freed slot goes to the tenant that holds the fewest slots of the pool now (running calls,
 *   counted from `hold`/a released wait to `freed`), ties to the one given a slot longest ago
 *   (round-robin), then to the longest waiting; a tenant's own calls stay FIFO. So while others
 *   wait, a tenant holding many slots gets no more, and one holding none is next: it waits for
 *   one slot to free, not for the queue.
 * - A full queue makes room for a tenant with fewer waiting calls than another: the newest
 *   waiting call of the tenant with the most answers BUSY in its place. The bound is the same;
 *   the BUSY falls on the tenant that filled the queue. A tenant with the most waiting is
 *   refused at once, as before.
 * - Reservation (`SlotReservation`): running calls are never taken back, so a session filling
 *   every slot with 50 s calls made another session's call wait 50 s, however fair the handing
 *   out of freed slots. So a tenant that holds a slot already may not take the pool's last
 *   `reservedSlots` free ones: it waits, and they go to a tenant holding none, at once.
 *   Decision: kept only while some open session holds none of the pool's slots (open sessions >
 *   tenants holding), i.e. while one may come for them: with one session (stdio), or every open
 *   one holding slots, a slot kept idle would serve no one. Kept only while the pool has more
 *   slots than `reservedSlots`: reserving a pool's only slot would leave a lone session none. A
 *   tenant held back holds a slot, so its own call ending lets it go at the latest: no deadlock.
 * One tenant (stdio has one session; calls given no session are the tenant '') is served FIFO.
 * Each release looks at every tenant waiting: at most `max` of them.
 */
export class WaitQueue {
  #max: number;
  /** Each tenant's waiting calls, oldest first; a tenant without waiters has no entry. */
  #waiting = new Map<string, Waiter[]>();
  #length = 0;
  #seq = 0;
  /** Slots each tenant holds (no entry: none). */
  #held = new Map<string, number>();
  /** When each tenant that holds or waits was last given a slot (#seq); none: not since it came. */
  #served = new Map<string, number>();
  /** Slots held by every tenant together. */
  #holding = 0;
  #reservation: SlotReservation | undefined;

  /** `reservation`: slots kept for a tenant holding none (none given: nothing is kept, and `take` never takes). */
  constructor(max: number, reservation?: SlotReservation) {
    this.#max = max;
    this.#reservation = reservation;
  }

  get length(): number {
    return this.#length;
  }

  /** Slots `tenant` holds now (running calls of the pool), for tests and stats. */
  heldBy(tenant: string): number {
    return this.#held.get(tenant) ?? 0;
  }

  /**
   * Whether `tenant` may take a free slot now (a pool that found one asks before `hold`): not when
   * it holds one already and the free ones are the pool's last `reservedSlots`, kept for a tenant
   * holding none (see the class comment).
   */
  admits(tenant = ''): boolean {
    const reservation = this.#reservation;
    if (!reservation || reservation.reservedSlots <= 0 || !this.#held.has(tenant)) return true;
    const slots = reservation.slots();
    if (slots <= reservation.reservedSlots || slots - this.#holding > reservation.reservedSlots) return true;
    return reservation.openSessions() <= this.#held.size;
  }

  /**
   * For a pool whose slots the queue counts (`reservation.slots()`, a thread pool's): holds a free
   * slot for `tenant` and answers true when there is one it may have; false: `wait` for one.
   */
  take(tenant = ''): boolean {
    if (this.#free() <= 0 || this.#waiting.has(tenant) || !this.admits(tenant)) return false;
    this.hold(tenant);
    return true;
  }

  /**
   * Waits for a slot: resolves holding it (give it back with `freed` or `drop`). Rejects with BUSY
   * (queue full), CANCELLED (`signal` aborted) or TIMEOUT (at `deadlineAt`, performance.now() ms).
   */
  wait(signal: AbortSignal | undefined, deadlineAt: number, what: string, tenant = ''): Promise<void> {
    // An aborted call takes no one's place.
    if (this.#length >= this.#max && (signal?.aborted || !this.#makeRoomFor(tenant, what))) {
      return Promise.reject(busy(what, this.#max));
    }
    if (signal?.aborted) return Promise.reject(new McpvisorError('CANCELLED', 'the call was cancelled'));
    return new Promise<void>((resolve, reject) => {
      const leave = () => {
        const line = this.#waiting.get(tenant);
        const index = line ? line.indexOf(waiter) : -1;
        if (index >= 0) {
          line!.splice(index, 1);
          this.#length--;
          if (line!.length === 0) {
            this.#waiting.delete(tenant);
            this.#forget(tenant);
          }
        }
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
      };
      const onAbort = () => {
        leave();
        reject(new McpvisorError('CANCELLED', 'the call was cancelled while waiting for a worker'));
      };
      const timer = setTimeout(() => {
        leave();
        reject(new McpvisorError('TIMEOUT', `the call waited for a worker of ${what} until its deadline`));
      }, Math.max(0, deadlineAt - performance.now()));
      const waiter: Waiter = {
        tenant,
        seq: this.#seq++,
        resolve: () => {
          leave();
          this.hold(tenant);
          resolve();
        },
        reject: (error) => {
          leave();
          reject(error);
        },
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      const line = this.#waiting.get(tenant);
      if (line) line.push(waiter);
      else this.#waiting.set(tenant, [waiter]);
      this.#length++;
    });
  }

  /** `tenant` took a free slot without waiting. */
  hold(tenant = ''): void {
    this.#holding++;
    this.#held.set(tenant, (this.#held.get(tenant) ?? 0) + 1);
    this.#served.set(tenant, this.#seq++);
  }

  /** A slot `tenant` held is free again (its call ended): the next waiter may have it. */
  freed(tenant = ''): void {
    this.drop(tenant);
    this.release(1);
  }

  /** Gives back a slot `tenant` held that ran nothing (no worker was free after all); lets no one go. */
  drop(tenant = ''): void {
    const held = (this.#held.get(tenant) ?? 0) - 1;
    if (held >= 0) this.#holding--;
    if (held > 0) this.#held.set(tenant, held);
    else {
      this.#held.delete(tenant);
      this.#forget(tenant);
    }
  }

  /**
   * Lets up to `slots` waiters go, each the oldest of the tenant holding the fewest slots among
   * those that may take one (`admits`). With a reservation, free slots kept back earlier go too
   * once they may (the session they were kept for closed).
   */
  release(slots = 1): void {
    for (let i = 0; i < slots || (this.#reservation?.reservedSlots && this.#free() > 0); i++) {
      const next = this.#next();
      if (!next) return;
      next.resolve();
    }
  }

  /** Fails every waiter with `error` (the pool stops, or its workers cannot start). */
  rejectAll(error: McpvisorError): void {
    for (const line of [...this.#waiting.values()]) for (const waiter of [...line]) waiter.reject(error);
  }

  /** Free slots the queue knows of: only with a reservation, which counts the pool's slots. */
  #free(): number {
    return this.#reservation ? this.#reservation.slots() - this.#holding : 0;
  }

  /** The oldest waiter of the tenant holding the fewest slots, of those it admits; among those, the one served longest ago. */
  #next(): Waiter | undefined {
    let best: Waiter | undefined;
    let bestHeld = 0;
    let bestServed = 0;
    for (const [tenant, line] of this.#waiting) {
      if (!this.admits(tenant)) continue;
      const held = this.#held.get(tenant) ?? 0;
      const served = this.#served.get(tenant) ?? -1;
      if (!best || held < bestHeld || (held === bestHeld && (served < bestServed || (served === bestServed && line[0].seq < best.seq)))) {
        best = line[0];
        bestHeld = held;
        bestServed = served;
      }
    }
    return best;
  }

  /** A tenant that neither holds nor waits is forgotten (sessions come and go). */
  #forget(tenant: string): void {
    if (!this.#held.has(tenant) && !this.#waiting.has(tenant)) this.#served.delete(tenant);
  }

  /** Refuses the newest waiter of the tenant with the most waiting, if it has more than `tenant` would. */
  #makeRoomFor(tenant: string, what: string): boolean {
    const own = (this.#waiting.get(tenant)?.length ?? 0) + 1;
    let fullest: Waiter[] | undefined;
    for (const line of this.#waiting.values()) if (!fullest || line.length > fullest.length) fullest = line;
    if (!fullest || fullest.length <= own) return false;
    fullest[fullest.length - 1].reject(busy(what, this.#max, true));
    return true;
  }
}

function busy(what: string, max: number, displaced = false): McpvisorError {
  const why = displaced ? '; this call gave its place to one of another session with fewer calls waiting' : '';
  return new McpvisorError('BUSY', `${what} is busy (${max} calls already waiting${why}); try again later`);
}
