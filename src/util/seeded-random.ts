/**
 * A small seeded generator (mulberry32): numbers in [0, 1) that repeat with their seed on every
 * platform, for whatever must replay from a seed (faults, fuzzing, benchmarks' orders, crash tests).
 *
 * @example
 * const random = seededRandom(42);
 * random(); // the same first number for seed 42, everywhere
 */
export function seededRandom(seed: number): () => number {
	let state = seed >>> 0;
	return () => {
		state = (state + 0x6d2b79f5) >>> 0;
		let t = state;
		t = Math.imul(t ^ (t >>> 15), t | 1);
		t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
		return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
	};
}
