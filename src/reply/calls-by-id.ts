/**
 * Tool calls in flight, for a listener that knows a call only by its id. A model may give two
 * calls of one reply the same id; each is still a call of its own (it runs and is answered, as
 * in pi), so the calls under one id are kept in the order they started, and an end takes the
 * first of them with its tool name, or the first of all when none has it. That is exact when
 * such calls name different tools or end in the order they started (always, in sequential
 * mode); two parallel calls of one tool with one id that end out of order cannot be told apart
 * by their events, which carry only the id.
 *
 * @example
 * const calls = new CallsById<{ path: string }>();
 * calls.add("t1", "read", { path: "/a" });
 * calls.add("t1", "read", { path: "/b" });
 * calls.take("t1", "read"); // { path: "/a" }
 */
export class CallsById<T> {
	readonly #calls = new Map<string, { toolName: string; value: T }[]>();

	/** A call started. */
	add(toolCallId: string, toolName: string, value: T): void {
		const calls = this.#calls.get(toolCallId);
		if (calls) calls.push({ toolName, value });
		else this.#calls.set(toolCallId, [{ toolName, value }]);
	}

	/** A call ended: its record, removed (undefined for a call that was never seen to start). */
	take(toolCallId: string, toolName: string): T | undefined {
		const calls = this.#calls.get(toolCallId);
		if (!calls) return undefined;
		const index = Math.max(
			0,
			calls.findIndex((call) => call.toolName === toolName),
		);
		const [call] = calls.splice(index, 1);
		if (calls.length === 0) this.#calls.delete(toolCallId);
		return call?.value;
	}
}
