/**
 * One run of the agent statechart for pi's loop API: the machine configured from pi's
 * `AgentLoopConfig`, its events delivered to the caller's sink.
 */
import { type Actor, createActor } from "xstate";
import { type agentLogic, runLogic } from "../machines/agent-logic.js";
import { defaultLoopConfig } from "../machines/defaults.js";
import type { AgentMachineCommand, AgentMachineConfig } from "../machines/types.js";
import type { AgentContext } from "../types/agent.js";
import type { AgentMessage } from "../types/messages.js";
import type { StreamFn } from "../types/stream.js";
import type { AgentEventSink, AgentLoopConfig } from "./agent-loop.js";
import { type EventSink, SinkDelivery } from "./sink-delivery.js";

/** The machine's configuration for pi's loop configuration. */
function machineConfig(config: AgentLoopConfig, streamFn: StreamFn | undefined): Partial<AgentMachineConfig> {
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
		reasoning: _reasoning,
		signal: _signal,
		...streamOptions
	} = config;
	return {
		streamFn: streamFn ?? defaultLoopConfig().streamFn,
		convertToLlm,
		transformContext,
		getApiKey,
		shouldStopAfterTurn,
		getSteeringMessages,
		getFollowUpMessages,
		toolExecution: toolExecution ?? "parallel",
		beforeToolCall,
		afterToolCall,
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
	let sinkError: unknown;
	let failed = false;
	let endRun!: (messages: AgentMessage[]) => void;
	const ended = new Promise<AgentMessage[]>((resolve) => (endRun = resolve));
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
			config: { ...machineConfig(config, streamFn), deliveryPending: () => delivery.pending(), deltaSink: (event) => delivery.event(event) },
			awaitDelivery: true,
		},
	});
	machine.on("*", (event) => {
		if (event.type === "agentchart.barrier") delivery.after(() => machine.send({ type: "delivered", barrier: event.barrier }));
		else if (event.type !== "agentchart.transcript") delivery.event(event);
	});
	const onAbort = () => machine.send({ type: "abort" });
	observe?.(machine);
	machine.start();
	machine.send(command);
	if (signal?.aborted) onAbort();
	else signal?.addEventListener("abort", onAbort, { once: true });
	try {
		const messages = await ended;
		if (failed) throw sinkError;
		return messages;
	} finally {
		signal?.removeEventListener("abort", onAbort);
		machine.stop();
	}
}
