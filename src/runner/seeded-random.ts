import { hash } from "node:crypto";

/** A small, fast PRNG (mulberry32) seeded from any string: the same seed gives the same sequence. */
export function seededRandom(seed: string): () => number {
  // One-shot hashing: a run of 2,000 iterations seeds 2,000 of these before its first test.
  let state = hash("sha256", seed, "buffer").readUInt32LE(0);
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
