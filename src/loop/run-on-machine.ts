/**
 * One run of the agent statechart for pi's loop API: the machine configured from pi's
 * `AgentLoopConfig`, its events delivered to the caller's sink.
 */
import { type Actor, createActor } from "xstate";
import { type agentLogic, runLogic } from "../machines/agent-logic.js";
import { polledMessages } from "../actors/loop-hooks-actors.js";
import { shown } from "../agent-input.js";
import { defaultLoopConfig } from "../machines/defaults.js";
import type { AgentMachineCommand, AgentMachineConfig } from "../machines/types.js";
import type { AgentContext } from "../types/agent.js";
import type { AgentMessage } from "../types/messages.js";
import type { StreamFn } from "../types/stream.js";
import type { AgentEventSink, AgentLoopConfig } from "./agent-loop.js";
import { LOOP_API_REJECTS_APPROVALS } from "./loop-approvals.js";
import { type EventSink, SinkDelivery } from "./sink-delivery.js";

/**
 * The same hook, reporting what it throws or rejects with to `failed` before passing it on (the
 * chart still ends the run on it). The chart keeps only the error's text, and after a turn not
 * even that: without this the caller would never learn that its hook failed.
 */
function reportingFailure<Args extends unknown[], Result>(
	hook: ((...args: Args) => Result | Promise<Result>) | undefined,
	failed: (error: unknown) => void,
	check: (answer: Result) => Result = (answer) => answer,
): ((...args: Args) => Promise<Result>) | undefined {
	// Not a function: passed on as it is, for the machine's input check to name the setting.
	if (hook === null) return undefined;
	if (typeof hook !== "function") return hook;
	return async (...args) => {
		try {
			return check(await hook(...args));
		} catch (error) {
			failed(error);
			throw error;
		}
	};
}

/**
 * The machine's configuration for pi's loop configuration; `hookFailed` hears the errors of
 * the hooks the chart asks at its decision points (the queues and `shouldStopAfterTurn`).
 */
function machineConfig(config: AgentLoopConfig, streamFn: StreamFn | undefined, hookFailed: (error: unknown) => void): Partial<AgentMachineConfig> {
	const {
		model: _model,
		convertToLlm,
		transformContext,
		getApiKey,
		shouldStopAfterTurn,
		getSteeringMessages,
		getFollowUpMessages,
		toolExecution,
		beforeToolCall,
		afterToolCall,
		// The machine's own settings, not stream options: spread into those they were sent to the
		// stream function and never applied, so the Agent's defaults held with no way to change them.
		toolTimeoutMs,
		streamIdleTimeoutMs,
		toolAbortGraceMs,
		reasoning: _reasoning,
		signal: _signal,
		...streamOptions
	} = config;
	// An optional hook given as null is none, as pi's loop takes it (`config.transformContext?.(...)`, `if (config.beforeToolCall)`).
	return {
		streamFn: streamFn ?? defaultLoopConfig().streamFn,
		convertToLlm,
		transformContext: transformContext ?? undefined,
		getApiKey: getApiKey ?? undefined,
		shouldStopAfterTurn: reportingFailure(shouldStopAfterTurn, hookFailed),
		// An answer that is not a list of messages fails like a poll that throws: the run rejects with it.
		getSteeringMessages: reportingFailure(getSteeringMessages, hookFailed, (answer) => polledMessages(answer, "getSteeringMessages")),
		getFollowUpMessages: reportingFailure(getFollowUpMessages, hookFailed, (answer) => polledMessages(answer, "getFollowUpMessages")),
		toolExecution: toolExecution ?? "parallel",
		beforeToolCall: beforeToolCall ?? undefined,
		afterToolCall: afterToolCall ?? undefined,
		// Undefined (or null, as an unset hook is) takes the default; anything else is checked with the machine's input.
		...(toolTimeoutMs != null ? { toolTimeoutMs } : {}),
		...(streamIdleTimeoutMs != null ? { streamIdleTimeoutMs } : {}),
		...(toolAbortGraceMs != null ? { toolAbortGraceMs } : {}),
		streamOptions,
	};
}

/**
 * Runs one run of the machine, its events through `emit`; resolves with the run's new messages.
 * `observe` sees the machine before it starts (the model-based tests drive and check it); it is
 * not part of the public API.
 *
 * @example
 * await runOnMachine({ type: "prompt", messages }, context, config, emit, undefined, streamFn, (actor) => actor.subscribe(log));
 */
export async function runOnMachine(
	command: AgentMachineCommand,
	context: AgentContext,
	config: AgentLoopConfig,
	emit: AgentEventSink,
	signal: AbortSignal | undefined,
	streamFn: StreamFn | undefined,
	observe?: (actor: Actor<typeof agentLogic>) => void,
): Promise<AgentMessage[]> {
	// Shallow, as the machine checks its input (which gets copies of these, so checks them too late).
	if (!Array.isArray(context.messages)) throw new TypeError(`agentchart: context.messages must be a list of messages, got ${shown(context.messages)}`);
	if (context.tools !== undefined && context.tools !== null && !Array.isArray(context.tools)) throw new TypeError(`agentchart: context.tools must be a list of tools, got ${shown(context.tools)}`);
	let sinkError: unknown;
	let failed = false;
	// As in pi, a queue poll or `shouldStopAfterTurn` that throws makes the run reject with that
	// error; the chart still closes the run first (turn_end, agent_end), so the sink hears a whole
	// run. After an abort (or a failed sink) the hook's answer is ignored, its failure too.
	let hookError: { error: unknown } | undefined;
	const hookFailed = (error: unknown) => {
		if (hookError === undefined && !failed && signal?.aborted !== true) hookError = { error };
	};
	let endRun!: (messages: AgentMessage[]) => void;
	let failRun!: (error: unknown) => void;
	const ended = new Promise<AgentMessage[]>((resolve, reject) => {
		endRun = resolve;
		failRun = reject;
	});
	// As in pi, a sink that throws ends the caller's part: it hears nothing more, and the run
	// (aborted so that nothing keeps running) rejects with that error.
	const sink: EventSink = (event) => (failed ? undefined : emit(event));
	const delivery = new SinkDelivery(
		sink,
		(error) => {
			if (failed) return;
			failed = true;
			sinkError = error;
			machine.send({ type: "listener.error", error: error instanceof Error ? error.message : String(error) });
		},
		(event) => {
			if (event.type === "agent_end") endRun(event.messages);
		},
	);
	const machine = createActor(runLogic(), {
		input: {
			systemPrompt: context.systemPrompt,
			messages: [...context.messages],
			tools: context.tools ? [...context.tools] : [],
			model: config.model,
			thinkingLevel: config.reasoning ?? "off",
			config: { ...machineConfig(config, streamFn, hookFailed), deliveryPending: () => delivery.pending(), deltaSink: (event) => delivery.event(event) },
			// What a poll answers is what the turn takes, all of it, as in pi: the one-at-a-time modes
			// are the Agent's queues'. One at a time, a second message waited a turn, and was lost with
			// the machine when the run ended first.
			steeringMode: "all",
			followUpMode: "all",
			awaitDelivery: true,
		},
	});
	machine.on("*", (event) => {
		if (event.type === "agentchart.barrier") delivery.after(() => machine.send({ type: "delivered", barrier: event.barrier }));
		else if (event.type !== "agentchart.transcript" && event.type !== "agentchart.checkpoint" && event.type !== "agentchart.approval.ignored") delivery.event(event);
		// Nobody can answer a question here (the loop API has no approve()): waiting would hold the run
		// for ever. The call is rejected, once the sink has the question, and never runs.
		if (event.type === "approval_requested") delivery.after(() => machine.send({ type: "reject", toolCallId: event.callKey, reason: LOOP_API_REJECTS_APPROVALS }));
	});
	// A failure of the chart itself (a defect: a hook's answer it cannot take fails as the hook)
	// stops the machine before agent_end: the run rejects with it, instead of never settling while
	// XState reports the error as uncaught.
	machine.subscribe({ error: (error) => failRun(error) });
	const onAbort = () => machine.send({ type: "abort" });
	observe?.(machine);
	machine.start();
	// An input the machine refused has failed it already (the run rejects with that error): a
	// command sent now would only be reported on the console as sent to a stopped actor.
	if (machine.getSnapshot().status === "active") machine.send(command);
	if (signal?.aborted) onAbort();
	else signal?.addEventListener("abort", onAbort, { once: true });
	try {
		const messages = await ended;
		if (failed) throw sinkError;
		if (hookError !== undefined) throw hookError.error;
		return messages;
	} finally {
		signal?.removeEventListener("abort", onAbort);
		machine.stop();
	}
}
