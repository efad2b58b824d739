/**
 * Waits `ms` milliseconds, or less if `signal` aborts first; never rejects. Callers check
 * `signal.aborted` afterwards to tell the two apart.
 *
 * @example
 * await sleepUnlessAborted(50, signal);
 * if (signal.aborted) return;
 */
// @ts-nocheck

export function sleepUnlessAborted(ms: number, signal?: AbortSignal): Promise<void> {
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
