// A seeded PRNG (mulberry32) so a chaos run's fault schedule can be replayed with --seed.
// Each fault kind draws from its own stream (derived from the seed and the kind's name), so
// adding, removing or reordering kinds does not change the schedule of the others.

export function seededRandom(seed) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    /** A float in [min, max). */
    between: (min, max) => min + next() * (max - min),
    /** An integer in [min, max]. */
    int: (min, max) => min + Math.floor(next() * (max - min + 1)),
    /** `count` distinct items of `items`, in random order. */
    sample(items, count) {
      const pool = [...items];
      for (let i = pool.length - 1; i > 0; i--) {
        const j = Math.floor(next() * (i + 1));
        [pool[i], pool[j]] = [pool[j], pool[i]];
      }
      return pool.slice(0, count);
    },
  };
}

/** A sub-seed for one named stream (FNV-1a of the label, mixed with the seed). */
export function deriveSeed(seed, label) {
  let h = 0x811c9dc5 ^ (seed >>> 0);
  for (const char of label) h = Math.imul(h ^ char.charCodeAt(0), 0x01000193) >>> 0;
  return h >>> 0;
}
