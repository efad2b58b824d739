/**
 * The tool-call ids of one request, as the server will see them. Providers put constraints on
 * ids (Anthropic: `[a-zA-Z0-9_-]{1,64}`; Mistral: nine letters and digits) and Anthropic and
 * Bedrock reject a request whose `tool_use` ids repeat ("tool_use ids must be unique"), which
 * wedges a session for good, since every later request resends the transcript. Ids repeat when
 * a model gives two calls of one reply the same id (some local and OpenAI-compatible servers
 * do, or reuse `call_0` every turn), or when two ids normalize to the same text.
 *
 * Each call gets its normalized id, or, when an earlier call of the request has that already,
 * a variant of it; each tool result takes the wire id of the call it answers (the first call of
 * the assistant message before it with its id that no result has answered yet). The mapping
 * depends only on the transcript, so a call and its result always agree and the request's
 * prefix stays the same from one request to the next (prompt caches keep working).
 *
 * @example
 * const ids = new RequestToolCallIds((id) => id, (id, n) => `${id}_${n}`);
 * ids.calls([{ id: "call_0" }, { id: "call_0" }]); // ["call_0", "call_0_2"]
 * ids.answer("call_0"); // "call_0"
 * ids.answer("call_0"); // "call_0_2"
 */
export class RequestToolCallIds<C extends { id: string } = { id: string }> {
	readonly #taken = new Set<string>();
	/** The calls of the latest assistant message that no result has answered yet, in call order. */
	#open: { call: C; wire: string }[] = [];

	/**
	 * @param normalize The server's form of an id (deterministic).
	 * @param variant The n-th variant (n ≥ 2) of an id, in the server's form, for an id taken already.
	 */
	constructor(
		readonly normalize: (id: string) => string,
		readonly variant: (id: string, n: number) => string,
	) {}

	/**
	 * The calls of an assistant message: their wire ids, unique in the request. They wait for
	 * their results from now on (the calls of an earlier message no longer do).
	 */
	calls(calls: readonly C[]): string[] {
		this.#open = [];
		return calls.map((call) => {
			let wire = this.normalize(call.id);
			for (let n = 2; this.#taken.has(wire); n++) wire = this.variant(call.id, n);
			this.#taken.add(wire);
			this.#open.push({ call, wire });
			return wire;
		});
	}

	/** The wire id of the call this result answers, which then waits no more; undefined when it answers none. */
	answer(toolCallId: string): string | undefined {
		const index = this.#open.findIndex((open) => open.call.id === toolCallId);
		if (index === -1) return undefined;
		return this.#open.splice(index, 1)[0]?.wire;
	}

	/** The calls no result answered (each needs one made up), after which none waits. */
	close(): { call: C; wire: string }[] {
		const unanswered = this.#open;
		this.#open = [];
		return unanswered;
	}
}
