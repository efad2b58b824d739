/**
 * agentchart's own walk of pi's loop API: a path run against the real `runAgentLoop` machinery
 * (`runOnMachine`, the machine and the sink delivery it builds), with the walk's puppet stream
 * and tool, and `getSteeringMessages`, `getFollowUpMessages` and `shouldStopAfterTurn` that answer
 * only when the path says so. The sink's delivery acknowledgements are held until the path
 * delivers, as a slow sink would. After each step the real machine must project to the model's
 * state; the run's events must nest and its transcript stay valid.
 */
import type { AnyMachineSnapshot } from "xstate";
import { runOnMachine } from "../../loop/run-on-machine.js";
import { defaultConvertToLlm } from "../../machines/run-helpers.js";
import type { AgentMachineEvent, ToolCallEntry } from "../../machines/types.js";
import type { AgentEvent, AgentToolResult, AnyAgentTool } from "../../types/agent.js";
import type { AgentMessage } from "../../types/messages.js";
import { EventInvariants } from "../event-invariants.js";
import { project } from "../model/projection.js";
import { definitions, type WalkPath, type WalkPlan, type WalkStep } from "../model/plan.js";
import { checkTranscript } from "../transcript-checks.js";
import { violation } from "../violations.js";
import { WalkCast } from "./cast.js";
import { plannedReply } from "./planned-reply.js";
import type { FoundViolation, PathRun } from "./run-path.js";
import { settle } from "./run-path.js";
import { microstepTransitions } from "../../machines/xstate-internals.js";

type Machine = Parameters<NonNullable<Parameters<typeof runOnMachine>[6]>>[0];

interface Gate<T> {
	resolve: (value: T) => void;
	reject: (error: Error) => void;
}

/**
 * Runs one path of the loop-API variant.
 *
 * @example
 * const run = await runLoopPath(plan, plan.paths[0] as WalkPath);
 */
export async function runLoopPath(plan: WalkPlan, path: WalkPath): Promise<PathRun> {
	const config = plan.config;
	const found: FoundViolation[] = [];
	const performed: WalkStep[] = [];
	const taken = new Set<string>();
	let index = -1;
	const report = (text: string, rule: "model-conformance" | "settle" = "model-conformance") => found.push({ violation: violation(rule, text), step: Math.max(index, 0) });
	let machine: Machine | undefined;
	let send: ((event: AgentMachineEvent) => void) | undefined;
	let held: number | undefined;
	const controller = new AbortController();
	const events = path.steps.map((step) => step.event);
	const cast: WalkCast = new WalkCast("path", { plannedReply: () => plannedReply(events, index, cast.auto), summary: config.summary }, (each) => found.push({ violation: each, step: Math.max(index, 0) }));
	const polls = { steeringPoll: [] as Gate<AgentMessage[]>[], followUpPoll: [] as Gate<AgentMessage[]>[], stopCheck: [] as Gate<boolean>[] };
	const gate = <T>(queue: Gate<T>[], whenAuto: T) =>
		new Promise<T>((resolve, reject) => {
			if (cast.auto) return resolve(whenAuto);
			queue.push({ resolve, reject });
		});
	const tools = (config.input.tools ?? []).map((tool) => cast.wrapTool(tool as AnyAgentTool));

	const invariants = new EventInvariants();
	let ended: AgentMessage[] | undefined;
	const sink = (event: AgentEvent) => {
		invariants.onEvent(event);
		if (event.type === "agent_end") {
			ended = event.messages;
			for (const each of checkTranscript([...(config.input.messages ?? []), ...event.messages])) found.push({ violation: each, step: Math.max(index, 0) });
		}
	};
	const observe = (actor: Machine) => {
		machine = actor;
		send = actor.send.bind(actor) as (event: AgentMachineEvent) => void;
		// Hold the sink's delivery acknowledgements until the path delivers.
		(actor as { send: (event: AgentMachineEvent) => void }).send = (event: AgentMachineEvent) => {
			if (event.type === "delivered" && !cast.auto) {
				held = Math.max(held ?? 0, event.barrier);
				return;
			}
			send?.(event);
		};
		actor.system.inspect({
			next: (event) => {
				if (event.type !== "@xstate.microstep" || event.actorRef !== actor) return;
				for (const t of microstepTransitions(event) as object[]) {
					const definition = definitions.get(t);
					if (definition) taken.add(definition.key);
				}
			},
		});
	};
	let run: Promise<AgentMessage[]> | undefined;

	const realCall = (abstractKey: string, from: AnyMachineSnapshot): ToolCallEntry | undefined => {
		const position = from.context.run?.batch?.calls.findIndex((call: ToolCallEntry) => call.key === abstractKey) ?? -1;
		return machine?.getSnapshot().context.run?.batch?.calls[position];
	};

	const answerPoll = (type: string, event: { output?: unknown }): string | undefined => {
		const [, outcome, id] = /^xstate\.(done|error)\.actor\.(steeringPoll|followUpPoll|stopCheck)$/.exec(type) ?? [];
		if (!outcome || !id) return `no way to perform ${type} on the loop API`;
		const waiting = polls[id as keyof typeof polls] as Gate<unknown>[];
		const next = waiting.shift();
		if (!next) return `no ${id} waiting`;
		if (outcome === "error") next.reject(new Error(`${id} failed`));
		else next.resolve(Array.isArray(event.output) ? event.output.map((message: AgentMessage) => ({ ...message })) : event.output);
		return undefined;
	};

	const perform = async (step: WalkStep): Promise<string | undefined> => {
		const event = step.event;
		switch (event.type) {
			case "prompt":
				run = runOnMachine(
					{ type: "prompt", messages: event.messages.map((message) => ({ ...message }) as AgentMessage) },
					{ systemPrompt: "", messages: [...(config.input.messages ?? [])], tools },
					{
						model: config.input.model as NonNullable<typeof config.input.model>,
						convertToLlm: defaultConvertToLlm,
						toolExecution: config.mode,
						getSteeringMessages: () => gate(polls.steeringPoll, []),
						getFollowUpMessages: () => gate(polls.followUpPoll, []),
						shouldStopAfterTurn: () => gate(polls.stopCheck, false),
					},
					sink,
					controller.signal,
					cast.streamFn,
					observe,
				);
				run.catch(() => {});
				return undefined;
			case "abort":
				controller.abort();
				return undefined;
			case "listener.error":
				send?.(event);
				return undefined;
			case "delivered":
				if (held === undefined) return "no delivery acknowledgement to release";
				send?.({ type: "delivered", barrier: held });
				return undefined;
			case "stream.start":
			case "stream.toolcall":
			case "stream.done": {
				const stream = cast.stream;
				if (!stream) return "no model call is streaming";
				await stream.ready();
				if (event.type === "stream.done") {
					if (event.message.stopReason === "aborted") stream.endAborted();
					else stream.forward(() => false, config.mode === "streaming" ? (each) => each.type === "toolcall_end" : undefined);
					return undefined;
				}
				const wanted = event.type === "stream.start" ? "start" : "toolcall_end";
				return stream.forward((each) => each.type === wanted) ? undefined : `the scripted stream has no ${wanted} left`;
			}
			case "tools.abandon":
			case "tools.interrupted":
				send?.(event);
				return undefined;
			case "stream.interrupted": {
				// What a restored stream actor tells the chart (the loop API keeps no journal).
				const attempt = machine?.getSnapshot().context.run?.attempt;
				if (attempt === undefined) return "no run to interrupt";
				invariants.restored();
				send?.({ type: "stream.interrupted", attempt });
				return undefined;
			}
			case "tool.timeout": {
				const real = realCall(event.callKey, step.from);
				if (!real) return `no real call for ${event.callKey}`;
				send?.({ ...event, callKey: real.key });
				return undefined;
			}
			case "tool.settled":
			case "tool.update": {
				const id = realCall(event.callKey, step.from)?.toolCall.id;
				const entry = id === undefined ? undefined : cast.tools.get(id);
				if (!id || !entry) return `tool call ${event.callKey} is not executing`;
				if (event.type === "tool.update") {
					entry.onUpdate?.(event.partialResult);
					return undefined;
				}
				cast.tools.delete(id);
				await entry.hold.release(event.outcome.isError ? { ok: false, error: new Error("fail") } : { ok: true, value: event.outcome.result as AgentToolResult<unknown> });
				return undefined;
			}
			default:
				return answerPoll(event.type, event as { output?: unknown });
		}
	};

	const conform = (expected: AnyMachineSnapshot, label: string): boolean => {
		// Before the prompt there is no machine; after agent_end the run stops it (its life is one run).
		if (!machine) return true;
		const snapshot = machine.getSnapshot() as unknown as AnyMachineSnapshot;
		if (snapshot.status === "stopped" && expected.matches("idle" as never)) return true;
		const real = project(config, snapshot);
		const modelState = project(config, expected);
		if (real === modelState) return true;
		report(`after ${label}: real ${real}\n    model ${modelState}`);
		return false;
	};

	for (index = 0; index < path.steps.length; index++) {
		const step = path.steps[index] as WalkStep;
		const problem = await perform(step);
		if (problem) {
			report(`step ${index} ${step.label}: ${problem}`);
			break;
		}
		await settle();
		performed.push(step);
		if (!conform(step.to, `step ${index} ${step.label}`)) break;
	}

	// Let the run finish on its own: it must end, and leave nothing behind.
	cast.finish();
	if (held !== undefined && machine?.getSnapshot().status === "active") send?.({ type: "delivered", barrier: held });
	for (const waiting of polls.steeringPoll.splice(0)) waiting.resolve([]);
	for (const waiting of polls.followUpPoll.splice(0)) waiting.resolve([]);
	for (const waiting of polls.stopCheck.splice(0)) waiting.resolve(false);
	if (run) {
		let timer: ReturnType<typeof setTimeout> | undefined;
		const finished = await Promise.race([run.then(() => true, () => true), new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), 3000)))]);
		clearTimeout(timer);
		if (!finished) report(`the run did not settle; machine in ${JSON.stringify(machine?.getSnapshot().value)}`, "settle");
		else if (ended === undefined) report("the run settled without agent_end", "settle");
		if (machine?.getSnapshot().status !== "stopped") report("the run's machine was not stopped", "settle");
	}
	await settle();
	for (const each of invariants.violations) found.push({ violation: each, step: Math.max(performed.length - 1, 0) });
	return { taken, violations: found, performed, replans: 0, leftAt: undefined, goalReached: true, restoredFrom: new Set() };
}
