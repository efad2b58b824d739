/**
 * Waits `ms` milliseconds, or less if `signal` aborts first; never rejects. Callers check
 * `signal.aborted` afterwards to tell the two apart.
 *
 * @example
 * await sleepUnlessAborted(50, signal);
 * if (signal.aborted) return;
 */
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

/**
 * Settles as `pending` does (rejecting with its error), or, when `signal` aborts first, resolves at
 * once (or rejects with `abortedError()`, when given): a wait an abort must be able to end (a store
 * that never answers). Without `abortedError`, callers check `signal.aborted` afterwards to tell
 * the two apart.
 *
 * @example
 * await unlessAborted(store.saveSnapshot(sessionId, snapshot), signal);
 * if (signal.aborted) return; // not waited for: the store may still write it
 */
export function unlessAborted(pending: PromiseLike<void>, signal: AbortSignal, abortedError?: () => Error): Promise<void> {
	if (signal.aborted) return abortedError ? Promise.reject(abortedError()) : Promise.resolve();
	return new Promise<void>((resolve, reject) => {
		const onAbort = () => (abortedError ? reject(abortedError()) : resolve());
		signal.addEventListener("abort", onAbort, { once: true });
		pending.then(
			() => {
				signal.removeEventListener("abort", onAbort);
				resolve();
			},
			(error: unknown) => {
				signal.removeEventListener("abort", onAbort);
				reject(error);
			},
		);
	});
}
