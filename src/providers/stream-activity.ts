/**
 * A built-in provider's sign of life before its reply streams: each attempt's request going out
 * and each answer coming back, a 429 or 5xx whose retry the SDK then waits for among them. The
 * agent's and the summariser's stall watches (`streamIdleTimeoutMs`) count it, so an SDK waiting
 * out a rate limit's `retry-after` is not taken for a model gone silent while each wait is
 * shorter than the idle limit: two such waits used to add up to it, the request was cancelled as
 * "stalled" and the third attempt never went out.
 *
 * It travels in the stream options under a symbol, not as a named option: it is no setting of
 * pi's stream options, a stream function that passes its options on (a spread copies it) keeps
 * it, and one that does not know it ignores it (its waits then count as silence, as before).
 */

/** The key the callback is set under in a stream call's options. */
export const STREAM_ACTIVITY: unique symbol = Symbol.for("agentchart.streamActivity");

/** Stream options that may carry the callback. */
export interface StreamActivityCarrier {
	[STREAM_ACTIVITY]?: (() => void) | undefined;
}

/**
 * Sets `onActivity` on a stream call's options (the object is changed and returned).
 *
 * @example
 * const options = withStreamActivity({ apiKey }, () => watch.touch());
 */
export function withStreamActivity<T extends object>(options: T, onActivity: () => void): T {
	(options as StreamActivityCarrier)[STREAM_ACTIVITY] = onActivity;
	return options;
}

/**
 * The callback a stream call's options carry, if any.
 *
 * @example
 * const activity = streamActivityOf(options);
 * activity?.();
 */
export function streamActivityOf(options: object): (() => void) | undefined {
	const callback = (options as StreamActivityCarrier)[STREAM_ACTIVITY];
	return typeof callback === "function" ? callback : undefined;
}
