/**
 * One process-wide timer for the engine's deadlines: tool timeouts, a silent model's stream,
 * the grace after an abort. They are long (minutes by default), almost never reached, and set
 * and cleared several times per turn; a Node timer per deadline costs more than the turn's
 * own work. Here a deadline is an entry in a set, and a single timer is kept for the nearest
 * one: setting a later deadline or clearing one touches no timer at all.
 *
 * The timer keeps the process alive only while some deadline is pending (a running tool, a
 * stream being read), as the timer of each deadline did; with none pending it is unref'd.
 */

/** A pending deadline: fires once at `at` (ms since the epoch) unless cleared first. */
export interface Deadline {
	readonly at: number;
	readonly fire: () => void;
}

const pending = new Set<Deadline>();
let timer: ReturnType<typeof setTimeout> | undefined;
/** When the timer fires, if it is armed (Infinity when not). */
let armedAt = Number.POSITIVE_INFINITY;
/**
 * The `setTimeout` the timer was armed with. A test's fake timers replace the global one; a
 * timer armed on a fake clock that was put away again would never fire, so a deadline set
 * after the swap arms a timer of its own kind.
 */
let armedWith: typeof setTimeout | undefined;

/**
 * Node's longest timer delay (about 24.8 days): a longer one fires at once. Deadlines here reach
 * a later time by re-arming; a limit handed to a library's timer is capped to it.
 *
 * @example
 * setTimeout(done, Math.min(limitMs, LONGEST_DELAY));
 */
export const LONGEST_DELAY = 2 ** 31 - 1;

function arm(at: number): void {
	if (timer !== undefined) clearTimeout(timer);
	armedAt = at;
	armedWith = setTimeout;
	timer = setTimeout(expire, Math.min(LONGEST_DELAY, Math.max(1, at - Date.now())));
}

function expire(): void {
	timer = undefined;
	armedAt = Number.POSITIVE_INFINITY;
	const now = Date.now();
	const due: Deadline[] = [];
	for (const deadline of pending) if (deadline.at <= now) due.push(deadline);
	for (const deadline of due) pending.delete(deadline);
	for (const deadline of due) {
		try {
			deadline.fire();
		} catch (error) {
			// A deadline's work failing is a defect to hear about, not a reason to skip the others.
			setTimeout(() => {
				throw error;
			});
		}
	}
	let next = Number.POSITIVE_INFINITY;
	for (const deadline of pending) if (deadline.at < next) next = deadline.at;
	if (next !== Number.POSITIVE_INFINITY && next < armedAt) arm(next);
}

/**
 * Calls `fire` once, `ms` milliseconds from now, unless {@link clearDeadline} is called first.
 *
 * @example
 * const deadline = setDeadline(180_000, () => controller.abort(new Error("timed out")));
 * // ... the tool returned in time:
 * clearDeadline(deadline);
 */
export function setDeadline(ms: number, fire: () => void): Deadline {
	const deadline: Deadline = { at: Date.now() + ms, fire };
	pending.add(deadline);
	if (deadline.at < armedAt) arm(deadline.at);
	else if (armedWith !== setTimeout) arm(armedAt);
	else if (pending.size === 1) timer?.ref?.();
	return deadline;
}

/**
 * Cancels a deadline (nothing happens if it fired or was cleared already).
 *
 * @example
 * clearDeadline(deadline);
 */
export function clearDeadline(deadline: Deadline | undefined): void {
	if (!deadline || !pending.delete(deadline)) return;
	// The timer stays armed for the deadline it was set for; it finds nothing due and re-arms for
	// the next one. With nothing pending it must not hold the process open until then.
	if (pending.size === 0) timer?.unref?.();
}
