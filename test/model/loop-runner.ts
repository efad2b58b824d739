/**
 * Runs an abstract path of the loop-API variant against the real `runAgentLoop` machinery
 * (`runOnMachine`, the machine and the sink delivery it builds): the puppet stream and tool of
 * runner.ts, plus gated `getSteeringMessages`, `getFollowUpMessages` and `shouldStopAfterTurn`
 * that answer only when the path says so. The sink's delivery acknowledgements are held until
 * the path delivers, as a slow sink would. After each step the real machine must project to the
 * model's state; the run's events must nest and its transcript stay valid.
 */
import type { AnyMachineSnapshot } from "xstate";
import { runOnMachine } from "../../src/loop/run-on-machine.js";
import { defaultConvertToLlm } from "../../src/machines/run-helpers.js";
import type { AgentMachineEvent } from "../../src/machines/types.js";
import type { AgentEvent, AgentTool } from "../../src/types/agent.js";
import type { AgentMessage } from "../../src/types/messages.js";
import { EventInvariants, transcriptViolations } from "../support/invariants.js";
import { providerRequestViolations } from "../support/provider-requests.js";
import { eventLabel, INITIAL_TRANSCRIPT, model, project, TOOL_NAME } from "./abstract-model.js";
import { definitions, type ModelPath } from "./graph.js";
import { type Gate, performPuppetEvent, type PuppetStream, puppetStreamFn, type RealRunResult, settle, type ToolGate } from "./runner.js";

type Machine = Parameters<NonNullable<Parameters<typeof runOnMachine>[6]>>[0];

/** Runs one loop-API path. */
export async function runLoopPath(path: ModelPath): Promise<RealRunResult> {
	const violations: string[] = [];
	const taken = new Set<string>();
	let auto = false;
	let index = -1;
	let stream: PuppetStream | undefined;
	let machine: Machine | undefined;
	let send: ((event: AgentMachineEvent) => void) | undefined;
	let held: number | undefined;
	const controller = new AbortController();
	const tools = new Map<string, ToolGate>();
	const polls = { steeringPoll: [] as Gate<AgentMessage[]>[], followUpPoll: [] as Gate<AgentMessage[]>[], stopCheck: [] as Gate<boolean>[] };
	const gate = <T>(queue: Gate<T>[], whenAuto: T) =>
		new Promise<T>((resolve, reject) => {
			if (auto) return resolve(whenAuto);
			queue.push({ resolve, reject });
		});

	const tool: AgentTool<object, unknown> = {
		name: TOOL_NAME,
		label: TOOL_NAME,
		description: "stub",
		parameters: { type: "object", properties: {} },
		execute: (toolCallId, _params, _signal, onUpdate) =>
			new Promise((resolve, reject) => {
				if (auto) return resolve({ content: [{ type: "text", text: "ok" }], details: {} });
				tools.set(toolCallId, { resolve, reject, onUpdate: onUpdate as ToolGate["onUpdate"] });
			}),
	};
	const streamFn = puppetStreamFn(path, { index: () => index, auto: () => auto, started: (puppet) => (stream = puppet) });

	const invariants = new EventInvariants();
	let ended: AgentMessage[] | undefined;
	const sink = (event: AgentEvent) => {
		invariants.onEvent(event);
		if (event.type === "agent_end") {
			ended = event.messages;
			const transcript = [...INITIAL_TRANSCRIPT, ...event.messages];
			violations.push(...transcriptViolations(transcript), ...providerRequestViolations(transcript));
		}
	};
	const observe = (actor: Machine) => {
		machine = actor;
		send = actor.send.bind(actor);
		// Hold the sink's delivery acknowledgements until the path delivers.
		(actor as { send: (event: AgentMachineEvent) => void }).send = (event: AgentMachineEvent) => {
			if (event.type === "delivered" && !auto) {
				held = Math.max(held ?? 0, event.barrier);
				return;
			}
			send?.(event);
		};
		actor.system.inspect({
			next: (event) => {
				if (event.type !== "@xstate.microstep" || event.actorRef !== actor) return;
				for (const t of (event as unknown as { _transitions: object[] })._transitions) {
					const definition = definitions.get(t);
					if (definition) taken.add(definition.key);
				}
			},
		});
	};
	let run: Promise<AgentMessage[]> | undefined;

	const realCallId = (abstractId: string, from: AnyMachineSnapshot): string | undefined => {
		const position = from.context.run?.batch?.calls.findIndex((call: { toolCall: { id: string } }) => call.toolCall.id === abstractId) ?? -1;
		return machine?.getSnapshot().context.run?.batch?.calls[position]?.toolCall.id;
	};

	const answerPoll = (type: string, event: { output?: unknown }): string | undefined => {
		const [, outcome, id] = /^xstate\.(done|error)\.actor\.(steeringPoll|followUpPoll|stopCheck)$/.exec(type) ?? [];
		if (!outcome || !id) return `no executor for ${type}`;
		const waiting = polls[id as keyof typeof polls] as Gate<unknown>[];
		const next = waiting.shift();
		if (!next) return `no ${id} waiting`;
		if (outcome === "error") next.reject(new Error(`${id} failed`));
		else next.resolve(Array.isArray(event.output) ? event.output.map((message: AgentMessage) => ({ ...message })) : event.output);
		return undefined;
	};

	const perform = (step: ModelPath["steps"][number]): string | undefined => {
		const event = step.event;
		switch (event.type) {
			case "prompt":
				run = runOnMachine(
					{ type: "prompt", messages: event.messages.map((message) => ({ ...message }) as AgentMessage) },
					{ systemPrompt: "", messages: [...INITIAL_TRANSCRIPT], tools: [tool] },
					{
						model,
						convertToLlm: defaultConvertToLlm,
						toolExecution: path.mode,
						getSteeringMessages: () => gate(polls.steeringPoll, []),
						getFollowUpMessages: () => gate(polls.followUpPoll, []),
						shouldStopAfterTurn: () => gate(polls.stopCheck, false),
					},
					sink,
					controller.signal,
					streamFn,
					observe,
				);
				run.catch(() => {});
				return;
			case "abort":
				controller.abort();
				return;
			case "listener.error":
				send?.(event);
				return;
			case "delivered":
				if (held === undefined) return "no delivery acknowledgement to release";
				send?.({ type: "delivered", barrier: held });
				return;
			case "stream.start":
			case "stream.toolcall":
			case "stream.done":
			case "tools.abandon":
			case "tool.settled":
			case "tool.update":
			case "tool.timeout":
				return performPuppetEvent(event, { stream, mode: path.mode, tools, send: (e) => send?.(e), realCallId: (id) => realCallId(id, step.from) });
			default:
				return answerPoll(event.type, event as { output?: unknown });
		}
	};

	const conform = (expected: AnyMachineSnapshot, label: string): boolean => {
		// Before the prompt there is no machine; after agent_end the run stops it (its life is one run).
		if (!machine) return true;
		const snapshot = machine.getSnapshot() as unknown as AnyMachineSnapshot;
		if (snapshot.status === "stopped" && expected.matches("idle" as never)) return true;
		const real = project(snapshot);
		const modelState = project(expected);
		if (real === modelState) return true;
		violations.push(`after ${label}: real ${real}\n    model ${modelState}`);
		return false;
	};

	let executed = 0;
	for (index = 0; index < path.steps.length; index++) {
		const step = path.steps[index] as ModelPath["steps"][number];
		const problem = perform(step);
		if (problem) {
			violations.push(`step ${index} ${eventLabel(step.event)}: ${problem}`);
			break;
		}
		await settle();
		executed++;
		if (!conform(step.to, `step ${index} ${eventLabel(step.event)}`)) break;
	}

	// Let the run finish on its own: it must end, and leave nothing behind.
	auto = true;
	if (held !== undefined && machine?.getSnapshot().status === "active") send?.({ type: "delivered", barrier: held });
	stream?.finish();
	for (const waiting of polls.steeringPoll.splice(0)) waiting.resolve([]);
	for (const waiting of polls.followUpPoll.splice(0)) waiting.resolve([]);
	for (const waiting of polls.stopCheck.splice(0)) waiting.resolve(false);
	for (const [id, waiting] of tools) {
		tools.delete(id);
		waiting.resolve({ content: [{ type: "text", text: "ok" }], details: {} });
	}
	if (run) {
		const finished = await Promise.race([run.then(() => true, () => true), new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 3000))]);
		if (!finished) violations.push(`the run did not settle; machine in ${JSON.stringify(machine?.getSnapshot().value)}`);
		else if (ended === undefined) violations.push("the run settled without agent_end");
		if (machine?.getSnapshot().status !== "stopped") violations.push("the run's machine was not stopped");
	}
	await settle();
	violations.push(...invariants.violations);
	return { taken, violations, executed };
}
