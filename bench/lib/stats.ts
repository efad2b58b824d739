import { sleepUnlessAborted } from "../../src/util/sleep.js";
/**
 * Small measuring helpers for the benchmarks. The machine is noisy (two shared cores), so
 * every figure is a median of interleaved repetitions after a warm-up, and comparisons are
 * ratios of numbers measured side by side in the same process.
 */

/** The global `gc` when Node runs with `--expose-gc`. */
const gcFunction: (() => void) | undefined = (globalThis as { gc?: () => void }).gc;

/**
 * Whether heap figures can be trusted: without `--expose-gc` a heap delta includes garbage.
 *
 * @example
 * if (!canCollectGarbage) console.warn("memory figures are approximate");
 */
export const canCollectGarbage = gcFunction !== undefined;

/**
 * Runs a full garbage collection (twice: the first pass can leave finalizable objects for
 * the second), or does nothing when `gc` is not exposed.
 *
 * @example
 * collectGarbage(); const before = process.memoryUsage().heapUsed;
 */
export function collectGarbage(): void {
	gcFunction?.();
	gcFunction?.();
}

/**
 * The median of some samples (NaN for none).
 *
 * @example
 * median([3, 1, 2]); // 2
 */
export function median(samples: readonly number[]): number {
	if (samples.length === 0) return Number.NaN;
	const sorted = [...samples].sort((a, b) => a - b);
	const middle = Math.floor(sorted.length / 2);
	return sorted.length % 2 === 1 ? (sorted[middle] as number) : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}

/**
 * Milliseconds an async function takes (a garbage collection first, outside the timing, so
 * one contender does not pay for another's garbage).
 *
 * @example
 * const ms = await timeAsync(() => agent.prompt("hi"));
 */
export async function timeAsync(work: () => Promise<unknown>): Promise<number> {
	collectGarbage();
	const start = performance.now();
	await work();
	return performance.now() - start;
}

/**
 * Runs `measure` for every contender `repetitions` times, interleaved (a, b, c, b, c, a, ...:
 * the starting contender rotates so none always runs right after a collection or a burst of
 * another's garbage), after `warmups` unrecorded rounds. Returns the samples per contender.
 *
 * @example
 * const samples = await interleaved(["ours", "pi"], 5, 1, (name) => timeAsync(() => run(name)));
 * median(samples.get("ours") ?? []);
 */
export async function interleaved<Name extends string>(
	names: readonly Name[],
	repetitions: number,
	warmups: number,
	measure: (name: Name) => Promise<number>,
): Promise<Map<Name, number[]>> {
	const samples = new Map<Name, number[]>(names.map((name) => [name, []]));
	for (let round = 0; round < warmups + repetitions; round++) {
		for (let offset = 0; offset < names.length; offset++) {
			const name = names[(round + offset) % names.length] as Name;
			const value = await measure(name);
			if (round >= warmups) samples.get(name)?.push(value);
		}
	}
	return samples;
}

/**
 * The medians of interleaved samples.
 *
 * @example
 * const medians = mediansOf(await interleaved(names, 5, 1, measure));
 */
export function mediansOf<Name extends string>(samples: Map<Name, number[]>): Record<Name, number> {
	const result = {} as Record<Name, number>;
	for (const [name, values] of samples) result[name] = median(values);
	return result;
}

/**
 * Waits for `ms` milliseconds.
 *
 * @example
 * await sleep(200);
 */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
	return sleepUnlessAborted(ms, signal);
}
