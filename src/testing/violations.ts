/**
 * What the testing kit reports: one violation is a rule that did not hold, said in a sentence,
 * with where it was seen. Checkers collect them instead of throwing, so a listener never throws
 * into the agent under test and a run reports every problem, not only the first.
 */

/**
 * The rules the kit checks. The first group is the engine's contract (a violation there is a bug
 * in agentchart, or in what your code did to the agent's state); the second is your code's
 * contract with the engine (a tool, a hook, a listener); the third is how the walk went.
 *
 * @example
 * const engine: AgentRule[] = ["run-nesting", "tool-answered", "transcript", "queue"];
 */
export type AgentRule =
	/** agent_start … agent_end and turn_start … turn_end nest, one run at a time. */
	| "run-nesting"
	/** message_start … message_update … message_end, one message at a time. */
	| "message-nesting"
	/** Every tool_execution_start has one tool_execution_end; updates only in between; `pendingToolCalls` mirrors them. */
	| "tool-execution"
	/** Every tool call of a reply that did not fail is answered by one tool result, in source order. */
	| "tool-answered"
	/** approval_requested inside its call's execution, then exactly one approval_resolved, before the call ends. */
	| "approval"
	/** The transcript is valid as a provider's input (each call answered once, right after its reply). */
	| "transcript"
	/** What the agent holds (a message, a tool result's details) is plain JSON, as `agent.snapshot()` must be: no BigInt, Date, Map, Set, cycle. */
	| "snapshot"
	/** What Anthropic's and OpenAI's converters would send for the transcript is a valid request. */
	| "provider-request"
	/** Every steering and follow-up message is delivered once, or is still queued: never lost, never twice. */
	| "queue"
	/** A run, an abort, a dispose, a compaction settles: waitForIdle resolves, nothing is left running. */
	| "settle"
	/** An idle agent is idle: not streaming, no pending calls, no child actor, no run in the machine. */
	| "idle"
	/** Nothing runs for a run that was aborted: no model request, no tool starts. */
	| "after-abort"
	/** A tool call that is not replay-safe runs once, restarts included. */
	| "replay"
	/** A command did what its documentation says (steer after dispose throws, reset empties...). */
	| "command"
	/** A tool's execute settled once, and reported progress only while it ran. */
	| "tool-contract"
	/** A tool's execute threw a TypeError, ReferenceError or RangeError: a mistake in it, not a failure it reports. */
	| "tool-threw"
	/** A hook (beforeToolCall, afterToolCall, transformContext, convertToLlm, summarize) threw. */
	| "hook-threw"
	/** A hook returned what the engine does not take as meant (beforeToolCall "block"; afterToolCall content that is not content). */
	| "hook-contract"
	/** A listener threw (the run was aborted with its error). */
	| "listener-threw"
	/** A promise rejected with nobody to catch it while the agent ran. */
	| "unhandled-rejection"
	/** XState or the agent warned (a command sent to an actor that can no longer take it). */
	| "console-warning"
	/** Strict walks only: the real agent's state differs from the chart's model after a step. */
	| "model-conformance"
	/** A check you added (`check` option) failed. */
	| "custom";

/**
 * One rule that did not hold.
 *
 * @example
 * const violation: AgentViolation = { rule: "tool-answered", message: "tool result c2 out of source order (expected c1)", event: 14 };
 */
export interface AgentViolation {
	/** Which rule. */
	rule: AgentRule;
	/** What happened, in a sentence. */
	message: string;
	/** The index of the event (in the order the agent emitted them) at which it was seen, if an event showed it. */
	event?: number | undefined;
}

/**
 * A violation as one line: `[rule] message (event #n)`.
 *
 * @example
 * formatViolation({ rule: "queue", message: 'steer "hi" delivered 2 times' }); // '[queue] steer "hi" delivered 2 times'
 */
export function formatViolation(violation: AgentViolation): string {
	return `[${violation.rule}] ${violation.message}${violation.event !== undefined ? ` (event #${violation.event})` : ""}`;
}

/**
 * Throws one error listing every violation (nothing when there is none): for a test that wants
 * a plain failure.
 *
 * @example
 * assertNoViolations(checkAgentInvariants(events, agent), "after the refund flow");
 */
export function assertNoViolations(violations: readonly AgentViolation[], context = ""): void {
	if (violations.length === 0) return;
	const lines = violations.map((violation) => `  ${formatViolation(violation)}`);
	throw new Error(`${context ? `${context}: ` : ""}${violations.length} invariant violation(s):\n${lines.join("\n")}`);
}

/** Builds a violation (for checkers that collect them). */
export function violation(rule: AgentRule, message: string, event?: number): AgentViolation {
	return event === undefined ? { rule, message } : { rule, message, event };
}

/**
 * What your `check` option found on an agent, as violations: its strings as `custom` ones; a
 * `check` that throws, or returns something other than a list (one that forgot its `return`
 * passed everything), is reported as such, not thrown at the walk's caller.
 *
 * @example
 * for (const found of customViolations(options.check, agent)) report(found);
 */
export function customViolations<A>(check: ((agent: A) => readonly (string | AgentViolation)[]) | undefined, agent: A): AgentViolation[] {
	if (!check) return [];
	let found: unknown;
	try {
		found = check(agent);
	} catch (error) {
		return [violation("custom", `your check threw: ${error instanceof Error ? error.message : String(error)}`)];
	}
	if (!Array.isArray(found)) return [violation("custom", `your check returned ${found === undefined ? "undefined (did it forget to return its list?)" : typeof found}, not a list of what it found (return [] when nothing is wrong)`)];
	return found.map((each: unknown) => (typeof each === "string" ? violation("custom", each) : (each as AgentViolation)));
}
