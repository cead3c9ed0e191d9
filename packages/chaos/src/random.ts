/**
 * A small seeded generator (mulberry32): the fault schedule and every contender's choices come
 * from the run's seed, so a printed seed replays the same schedule.
 */
export class Random {
  #state: number;

  constructor(seed: number) {
    this.#state = seed >>> 0;
  }

  /** Uniform in [0, 1). */
  next(): number {
    this.#state = (this.#state + 0x6d2b79f5) >>> 0;
    let t = this.#state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  between(min: number, max: number): number {
    return min + (max - min) * this.next();
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new RangeError('pick() from an empty list');
    return items[Math.floor(this.next() * items.length)]!;
  }

  /** A shuffled copy (Fisher–Yates). */
  shuffle<T>(items: readonly T[]): T[] {
    const copy = [...items];
    for (let i = copy.length - 1; i > 0; i--) {
      const j = Math.floor(this.next() * (i + 1));
      [copy[i], copy[j]] = [copy[j]!, copy[i]!];
    }
    return copy;
  }

  /** A seed for a sub-generator (one per contender), derived so runs replay. */
  fork(): number {
    return Math.floor(this.next() * 2 ** 32);
  }
}

/** A fresh seed when none is given; printed by every run so it can be replayed. */
export function newSeed(): number {
  return Math.floor(Math.random() * 2 ** 31);
}
