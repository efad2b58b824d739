/**
 * The deliberate bugs. Each is one or more exact find/replace patches on engine files; the
 * `from` text must occur exactly once, so a refactor that moves the code makes the runner
 * fail loudly instead of silently testing nothing. When an anchor breaks, rewrite it
 * against the new code: the bug it describes still has to be killed.
 */

/** One textual edit. */
export interface Patch {
	/** Path relative to the repository root, under src/. */
	file: string;
	/** Exact text that must occur exactly once in the file. */
	from: string;
	/** What replaces it. */
	to: string;
}

/** A deliberate bug. */
export interface Mutant {
	/** Short stable name, for `--only`. */
	id: string;
	/** The bug, as a reviewer would describe it. */
	description: string;
	patches: Patch[];
}

const MACHINE = "src/machines/agent-machine.ts";
const HELPERS = "src/machines/run-helpers.ts";
const TOOLS = "src/actors/tool-actors.ts";
const STREAMING_TOOLS = "src/machines/streaming-tools.ts";

/**
 * Every mutant the suite must kill.
 *
 * @example
 * for (const mutant of MUTANTS) console.log(mutant.id, mutant.description);
 */
export const MUTANTS: Mutant[] = [
	{
		id: "drop-steering",
		description: "A steering message is taken from the queue but never injected into the next turn",
		patches: [
			{
				file: MACHINE,
				from: `		startNextTurnWithSteering: enqueueActions(({ context, enqueue }) => {
			const { taken, rest } = takeFromQueue(context.steeringQueue, context.steeringMode);
			enqueue.assign({ steeringQueue: rest });
			startNextTurn(context, taken, enqueue);`,
				to: `		startNextTurnWithSteering: enqueueActions(({ context, enqueue }) => {
			const { taken, rest } = takeFromQueue(context.steeringQueue, context.steeringMode);
			enqueue.assign({ steeringQueue: rest });
			startNextTurn(context, [], enqueue);`,
			},
		],
	},
	{
		id: "results-in-completion-order",
		description: "Parallel tool results become messages as each tool settles (completion order), not in source order after the batch",
		patches: [
			{
				file: MACHINE,
				from: `	if (batch.mode === "sequential") {
		const message = toolResultMessage(call.toolCall, outcome);`,
				to: `	if (batch.mode !== "streaming") {
		const message = toolResultMessage(call.toolCall, outcome);`,
			},
		],
	},
	{
		id: "skip-aborted-tool-results",
		description: "After an abort, the results of the batch's tool calls are not recorded",
		patches: [
			{
				file: MACHINE,
				from: "if (call.messageEmitted || !call.outcome) return call;",
				to: "if (call.messageEmitted || !call.outcome || context.run?.aborted) return call;",
			},
		],
	},
	{
		id: "abort-leaves-tools-running",
		description: "abort() does not reach running tools: their signal is not linked to the run's",
		patches: [
			{
				file: MACHINE,
				from: "const signal = AbortSignal.any([run.controller.signal, controller.signal]);",
				to: "const signal = AbortSignal.any([controller.signal]);",
			},
		],
	},
	{
		id: "timeout-leaves-tool-running",
		description: "A timed-out tool is recorded as timed out but never told to stop (signal not aborted, actor not stopped)",
		patches: [
			{
				file: MACHINE,
				from: `			// A timed-out tool is told to stop; its late result is ignored.
			stopToolCall(call, enqueue);`,
				to: `			// A timed-out tool is told to stop; its late result is ignored.
			if (event.type !== "tool.timeout") stopToolCall(call, enqueue);`,
			},
		],
	},
	{
		id: "follow-ups-before-steering",
		description: "After a turn, queued follow-ups are taken before steering (and before pending tool results)",
		patches: [
			{
				file: MACHINE,
				from: `						{
							guard: and(["eventsDelivered", or(["toolsWantAnotherCall", "steeringQueued"])]),`,
				to: `						{ guard: and(["eventsDelivered", "followUpQueued"]), target: "before-call", actions: "startNextTurnWithFollowUps" },
						{
							guard: and(["eventsDelivered", or(["toolsWantAnotherCall", "steeringQueued"])]),`,
			},
		],
	},
	{
		id: "terminate-ignored",
		description: "A batch whose every result says terminate still calls the model again",
		patches: [
			{
				file: HELPERS,
				from: "return batch.calls.length > 0 && batch.calls.every((call) => call.outcome?.result.terminate === true);",
				to: "return false;",
			},
		],
	},
	{
		id: "terminate-when-any",
		description: "A batch terminates when any (not every) result says terminate",
		patches: [
			{
				file: HELPERS,
				from: "return batch.calls.length > 0 && batch.calls.every((call) => call.outcome?.result.terminate === true);",
				to: "return batch.calls.length > 0 && batch.calls.some((call) => call.outcome?.result.terminate === true);",
			},
		],
	},
	{
		id: "length-runs-tools",
		description: 'The tool calls of a reply cut off by the output limit (stopReason "length") are executed',
		patches: [{ file: HELPERS, from: 'truncated: assistant.stopReason === "length",', to: "truncated: false," }],
	},
	{
		id: "length-runs-tools-streaming",
		description: 'Streaming mode: a tool call left unfinished by a "length" stop is executed instead of answered with an error',
		patches: [{ file: STREAMING_TOOLS, from: 'if (message.stopReason === "length") cutOff.push(entry);', to: "" }],
	},
	{
		id: "late-on-update",
		description: "An onUpdate after the tool settled still becomes a tool_execution_update",
		// Three layers drop a late update: the actor's settled flag, the machine's guard, and
		// XState itself (a stopped callback actor's sendBack is ignored). Removing one layer
		// is an equivalent mutant no test can kill, so the bug removes all three: the actor
		// forwards, the guard lets it through, and a tool that settles normally is not stopped.
		patches: [
			{
				file: MACHINE,
				from: `			// A timed-out tool is told to stop; its late result is ignored.
			stopToolCall(call, enqueue);`,
				to: `			// A timed-out tool is told to stop; its late result is ignored.
			if (event.type === "tool.timeout") stopToolCall(call, enqueue);`,
			},
			{
				file: TOOLS,
				from: `	const onUpdate = (partialResult: AgentToolResult<unknown>) => {
		if (settled) return;`,
				to: `	const onUpdate = (partialResult: AgentToolResult<unknown>) => {`,
			},
			{
				file: MACHINE,
				from: `			if (event.type !== "tool.update" && event.type !== "tool.settled" && event.type !== "tool.timeout") return false;
			return callById(context, event.toolCallId)?.status === "running";`,
				to: `			if (event.type !== "tool.update" && event.type !== "tool.settled" && event.type !== "tool.timeout") return false;
			if (event.type === "tool.update") return callById(context, event.toolCallId) !== undefined;
			return callById(context, event.toolCallId)?.status === "running";`,
			},
		],
	},
	{
		id: "abort-consumes-steering",
		description: "abort() empties the steering queue (queued messages must stay queued)",
		patches: [
			{
				file: MACHINE,
				from: "return { run: { ...run, aborted: true } };",
				to: "return { run: { ...run, aborted: true }, steeringQueue: [] };",
			},
		],
	},
	{
		id: "barrier-not-awaited",
		description: "The loop takes its next decision without waiting for listeners (the delivery barrier passes at once)",
		patches: [
			{
				file: MACHINE,
				from: "eventsDelivered: ({ context }) => !context.awaitDelivery || context.deliveredBarrier >= context.barrier,",
				to: "eventsDelivered: () => true,",
			},
		],
	},
	{
		id: "steering-all-at-once",
		description: 'Steering mode "one-at-a-time" takes every queued message at once',
		patches: [
			{
				file: HELPERS,
				from: 'if (mode === "all") return { taken: queue, rest: [] };',
				to: "return { taken: queue, rest: [] };",
			},
		],
	},
];
