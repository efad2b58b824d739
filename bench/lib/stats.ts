/**
 * Small measuring helpers for the benchmarks. The machine is noisy (two shared cores), so a
 * figure is never one sample: it is the median of repetitions, printed with its min–max, and
 * a comparison is a ratio of samples taken side by side (see `paired.ts`).
 */

/** The global `gc` when Node runs with `--expose-gc` (V8's, which takes an optional `{ type }`). */
const gcFunction: ((options?: { type: "major" | "minor" }) => void) | undefined = (globalThis as { gc?: (options?: { type: "major" | "minor" }) => void }).gc;

/**
 * Whether heap figures can be trusted: without `--expose-gc` a heap delta includes garbage.
 *
 * @example
 * if (!canCollectGarbage) console.warn("memory figures are approximate");
 */
export const canCollectGarbage = gcFunction !== undefined;

/**
 * Runs a full garbage collection (twice: the first pass can leave finalizable objects for
 * the second), or does nothing when `gc` is not exposed. For memory figures only: a full
 * collection also shrinks the young generation, so whatever runs next scavenges far more often
 * than it would in a warm process (measured: 10k deltas took 2–5× longer, and varied 3×).
 *
 * @example
 * collectGarbage(); const before = process.memoryUsage().heapUsed;
 */
export function collectGarbage(): void {
	gcFunction?.();
	gcFunction?.();
}

/**
 * Collects the young generation only (a scavenge): the short-lived garbage the previous sample
 * left is gone, so it is not charged to the next one, and the heap keeps the shape it has in a
 * warm process. What to call before a timed sample.
 *
 * @example
 * collectYoungGarbage(); const start = performance.now();
 */
export function collectYoungGarbage(): void {
	gcFunction?.({ type: "minor" });
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

/** A figure as it is printed: the median of its samples and their spread. */
export interface Summary {
	median: number;
	min: number;
	max: number;
	/** The samples, in the order they were taken (kept so a reader can re-derive anything). */
	samples: number[];
}

/**
 * Median, min and max of some samples (all NaN for none).
 *
 * @example
 * summarize([3, 1, 2]); // { median: 2, min: 1, max: 3, samples: [3, 1, 2] }
 */
export function summarize(samples: readonly number[]): Summary {
	if (samples.length === 0) return { median: Number.NaN, min: Number.NaN, max: Number.NaN, samples: [] };
	return { median: median(samples), min: Math.min(...samples), max: Math.max(...samples), samples: [...samples] };
}

/**
 * Scales every number of a summary (unit conversions: ms to µs, bytes to KiB).
 *
 * @example
 * scaleSummary(summarize([1, 2]), 1000).median; // 1500
 */
export function scaleSummary(summary: Summary, factor: number): Summary {
	return {
		median: summary.median * factor,
		min: summary.min * factor,
		max: summary.max * factor,
		samples: summary.samples.map((value) => value * factor),
	};
}

/** A straight line fitted to points: `y = intercept + slope * x`. */
export interface LineFit {
	slope: number;
	intercept: number;
	/** Coefficient of determination (1 = the points lie on the line). */
	r2: number;
}

/**
 * Least squares of `ys` on `xs`, each point weighted by `weights` (default 1). With fewer than
 * two distinct `xs` everything is NaN. R² is the weighted one.
 *
 * @example
 * fitLine([1, 2, 3], [3, 5, 7]); // { slope: 2, intercept: 1, r2: 1 }
 * // Relative errors (timing noise grows with the time): weight 1/x².
 * fitLine(xs, ys, xs.map((x) => 1 / (x * x)));
 */
export function fitLine(xs: readonly number[], ys: readonly number[], weights?: readonly number[]): LineFit {
	const n = Math.min(xs.length, ys.length);
	let total = 0;
	let meanX = 0;
	let meanY = 0;
	for (let i = 0; i < n; i++) {
		const w = weights?.[i] ?? 1;
		total += w;
		meanX += w * (xs[i] as number);
		meanY += w * (ys[i] as number);
	}
	meanX /= total;
	meanY /= total;
	let sxx = 0;
	let sxy = 0;
	let syy = 0;
	for (let i = 0; i < n; i++) {
		const w = weights?.[i] ?? 1;
		const dx = (xs[i] as number) - meanX;
		const dy = (ys[i] as number) - meanY;
		sxx += w * dx * dx;
		sxy += w * dx * dy;
		syy += w * dy * dy;
	}
	if (n < 2 || !(sxx > 0)) return { slope: Number.NaN, intercept: Number.NaN, r2: Number.NaN };
	const slope = sxy / sxx;
	return { slope, intercept: meanY - slope * meanX, r2: syy === 0 ? 1 : (sxy * sxy) / (sxx * syy) };
}

/**
 * Milliseconds an async function takes (the young generation collected first, outside the
 * timing, so one contender does not pay for the short-lived garbage of another).
 *
 * @example
 * const ms = await timeAsync(() => agent.prompt("hi"));
 */
export async function timeAsync(work: () => Promise<unknown>): Promise<number> {
	collectYoungGarbage();
	const start = performance.now();
	await work();
	return performance.now() - start;
}

/**
 * Waits for `ms` milliseconds, or until `signal` aborts (never rejects).
 *
 * @example
 * await sleep(200);
 */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
	if (signal?.aborted || ms <= 0) return Promise.resolve();
	return new Promise((resolve) => {
		const timer = setTimeout(done, ms);
		function done() {
			clearTimeout(timer);
			signal?.removeEventListener("abort", done);
			resolve();
		}
		signal?.addEventListener("abort", done, { once: true });
	});
}

/**
 * Resolves after the event loop has turned once (I/O and timers get their chance), as a
 * server yields between requests.
 *
 * @example
 * await nextTurnOfTheLoop();
 */
export function nextTurnOfTheLoop(): Promise<void> {
	return new Promise((resolve) => setImmediate(resolve));
}
