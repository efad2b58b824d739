import { type Deadline, clearDeadline, setDeadline } from "./deadlines.js";

/**
 * What a stalled model stream is reported as (the stream actor and the summariser say the same).
 * Only the model's events are watched: a server that keeps the connection alive with pings and
 * sends nothing else stalls too, and "nothing arrived" sent people looking at the network.
 *
 * @example
 * new Error(`The ${modelStallText(120_000)}; the request was cancelled`);
 * // "The model's stream stalled: no content arrived for 120 s (streamIdleTimeoutMs; keep-alive pings do not count); ..."
 */
export function modelStallText(timeoutMs: number): string {
	return `model's stream stalled: no content arrived for ${timeoutMs / 1000} s (streamIdleTimeoutMs; keep-alive pings do not count)`;
}

/**
 * Watches a stream for silence: `touch()` on every event; when nothing arrived for `timeoutMs`
 * (checked four times per period, so detection lands between 1 and 1.25 periods), calls
 * `onStall`. Counting events instead of reading the clock keeps the per-delta cost to an
 * increment. A reader that counts its events itself passes `eventsRead` instead of calling
 * `touch()` (a field increment in its loop, not a call), and `paused` when it may stop reading
 * for reasons of its own (its listeners still have an event): a check that finds it paused
 * counts as a sign of life. A timeout of 0 watches nothing.
 *
 * @example
 * const watch = watchForStall(120_000, () => controller.abort());
 * for await (const event of stream) { watch.touch(); ... }
 * watch.stop();
 */
export function watchForStall(timeoutMs: number, onStall: () => void, eventsRead?: () => number, paused?: () => boolean): { touch(): void; stop(): void } {
	if (timeoutMs <= 0) return { touch() {}, stop() {} };
	let events = 0;
	const count = eventsRead ?? (() => events);
	let seenAtLastCheck = 0;
	let quietChecks = 0;
	let stopped = false;
	// A shared deadline per check, not a timer of its own: a turn starts and ends several watches.
	let check: Deadline | undefined;
	const schedule = () => {
		check = setDeadline(timeoutMs / 4, () => {
			if (stopped) return;
			const seen = count();
			if (seen !== seenAtLastCheck || paused?.()) {
				seenAtLastCheck = seen;
				quietChecks = 0;
			} else if (++quietChecks >= 4) {
				onStall();
				return;
			}
			schedule();
		});
	};
	schedule();
	return {
		touch() {
			events++;
		},
		stop() {
			stopped = true;
			clearDeadline(check);
		},
	};
}
