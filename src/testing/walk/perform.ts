/**
 * One step of a path, performed on the real agent: a command through the agent's API, a held
 * answer let go (the model's stream, a tool, a hook, a summariser, a delivery acknowledgement),
 * or an event the machine's own timers or a restore would send, sent to the machine. Returns
 * what made the step impossible, if anything.
 */
import type { AnyMachineSnapshot } from "xstate";
import { InterruptedByRestart } from "../../actors/compaction-protocol.js";
import type { AgentMachineEvent, ToolCallEntry } from "../../machines/types.js";
import { callKeyOf } from "../../machines/run-helpers.js";
import type { AgentToolResult, BeforeToolCallResult } from "../../types/agent.js";
import type { AgentMessage } from "../../types/messages.js";
import { describeError } from "../../util/describe-error.js";
import { isFactoryMistake, refusedPrompt } from "../factory-calls.js";
import type { Settlement } from "../instrument/checked-calls.js";
import { NO_SUCH_CALL, compactionFailsAtOnce, settlesAtOnce } from "../model/alphabet.js";
import { withClockPastDeadlines, type WalkStep } from "../model/plan.js";
import type { PathRunner } from "./run-path.js";
import { SIMULATED_LISTENER_FAILURE } from "./run-path.js";

const ignore = (promise: Promise<unknown>) => void promise.catch(() => {});

function abstractCall(from: AnyMachineSnapshot, key: string): ToolCallEntry | undefined {
	return from.context.run?.batch?.calls.find((call: ToolCallEntry) => call.key === key);
}

/** The real call at the abstract call's position. */
function realCall(run: PathRunner, key: string, from: AnyMachineSnapshot): ToolCallEntry | undefined {
	const position = from.context.run?.batch?.calls.findIndex((call: ToolCallEntry) => call.key === key) ?? -1;
	return run.agent.actor.getSnapshot().context.run?.batch?.calls[position];
}

/** Lets `beforeToolCall` answer for a call: as the path says (puppets), or as your hook did. */
async function releaseHook(run: PathRunner, id: string, answer: BeforeToolCallResult | undefined): Promise<string | undefined> {
	if (!(await run.until(() => run.cast.hooks.has(id)))) return `beforeToolCall was not asked about call ${id}`;
	const hold = run.cast.hooks.get(id);
	run.cast.hooks.delete(id);
	const released = await hold?.release(run.cast.outcomes === "path" ? { ok: true, value: answer } : undefined, run.options.stepTimeoutMs);
	return released ? undefined : `beforeToolCall did not answer about call ${id} within ${run.options.stepTimeoutMs} ms`;
}

/** Lets a running tool answer: as the path says (puppets), or as your tool did. */
async function releaseTool(run: PathRunner, id: string, event: Extract<AgentMachineEvent, { type: "tool.settled" | "tool.update" }>): Promise<string | undefined> {
	if (!(await run.until(() => run.cast.tools.has(id)))) return `tool call ${id} is not executing`;
	const entry = run.cast.tools.get(id);
	if (!entry) return `tool call ${id} is not executing`;
	if (event.type === "tool.update") {
		entry.onUpdate?.(event.partialResult);
		return undefined;
	}
	run.cast.tools.delete(id);
	const given: Settlement<AgentToolResult<unknown>> | undefined =
		run.cast.outcomes === "agent" ? undefined : event.outcome.isError ? { ok: false, error: new Error("fail") } : { ok: true, value: event.outcome.result };
	const released = await entry.hold.release(given, run.options.stepTimeoutMs);
	return released ? undefined : `tool "${entry.toolName}" (call ${id}) did not answer within ${run.options.stepTimeoutMs} ms`;
}

/** A running call of streaming mode with a hook: the batch actor asks the hook before it runs the call. */
async function performOnRunningCall(run: PathRunner, step: WalkStep, event: Extract<AgentMachineEvent, { type: "tool.settled" | "tool.update" | "tool.timeout" | "tool.approval" | "tool.executing" }>): Promise<string | undefined> {
	const real = realCall(run, event.callKey, step.from);
	if (!real) return `no real call for ${event.callKey}`;
	const id = real.toolCall.id;
	if (event.type === "tool.timeout") {
		run.send({ ...event, callKey: real.key });
		return undefined;
	}
	// The batch actor already answered it on its own.
	if (event.type === "tool.settled" && settlesAtOnce(step.from)?.type === "tool.settled") return undefined;
	const beingPrepared = abstractCall(step.from, event.callKey)?.args === undefined;
	if (beingPrepared) {
		if (event.type === "tool.approval") return releaseHook(run, id, event.approval ? { approval: "required", reason: event.approval.reason } : undefined);
		const blocked = event.type === "tool.settled" && event.outcome.isError && event.outcome.result.content.some((block) => block.type === "text" && block.text === "blocked");
		if (blocked) return releaseHook(run, id, { block: true, reason: "blocked" });
		const problem = await releaseHook(run, id, undefined);
		if (problem) return problem;
		// The hook let it through: the batch actor tells the chart, and the tool is asked next.
		if (event.type === "tool.executing") return (await run.until(() => realCall(run, event.callKey, step.from)?.args !== undefined)) ? undefined : `tool call ${id} did not start executing after beforeToolCall let it through`;
	}
	if (event.type === "tool.approval" || event.type === "tool.executing") return `tool call ${id} is not being prepared`;
	return releaseTool(run, id, event);
}

/** A compaction's end: the summariser answers (or the real actor already failed on its own). */
async function performCompactionEnd(run: PathRunner, step: WalkStep, failed: boolean, error: unknown): Promise<string | undefined> {
	if (compactionFailsAtOnce(run.plan.config, step.from)) return undefined;
	if ((error as { interruptedByRestart?: boolean } | undefined)?.interruptedByRestart) {
		// What a restore tells the restored chart (sent to this one): its listeners see the compaction anew.
		run.invariants.restored();
		run.send({ type: "xstate.error.actor.compaction", error: new InterruptedByRestart() } as unknown as AgentMachineEvent);
		return undefined;
	}
	if (!(await run.until(() => run.cast.summaries.length > 0))) return "no summariser waiting";
	const hold = run.cast.summaries.pop();
	const given: Settlement<string> | undefined = run.cast.outcomes === "agent" && hold?.produced ? undefined : failed ? { ok: false, error: new Error("summariser failed") } : { ok: true, value: run.plan.config.summary };
	const released = await hold?.release(given, run.options.stepTimeoutMs);
	return released ? undefined : `the summariser did not answer within ${run.options.stepTimeoutMs} ms`;
}

/** The model's stream: forwards what the path says the provider sends now. */
async function performStream(run: PathRunner, event: Extract<AgentMachineEvent, { type: "stream.start" | "stream.toolcall" | "stream.done" }>): Promise<string | undefined> {
	if (!(await run.until(() => run.cast.stream !== undefined && !run.cast.stream.ended))) return "no model call is streaming";
	const stream = run.cast.stream;
	if (!stream) return "no model call is streaming";
	await stream.ready();
	if (event.type === "stream.done") {
		if (event.message.stopReason === "aborted") stream.endAborted();
		// The path closed every tool call it wanted streamed; the rest the provider "never closed"
		// (in streaming mode a toolcall_end starts the tool, which the path did not ask for).
		else stream.forward(() => false, run.plan.config.mode === "streaming" ? (each) => each.type === "toolcall_end" : undefined);
		return undefined;
	}
	const wanted = event.type === "stream.start" ? "start" : "toolcall_end";
	return stream.forward((each) => each.type === wanted) ? undefined : `the scripted stream has no ${wanted} left`;
}

/** A message as the walk sends it: a copy with a timestamp of its own (the queue ledger tells messages apart by it). */
function fresh(run: PathRunner, message: AgentMessage): AgentMessage {
	return { ...message, timestamp: run.nextStamp() } as AgentMessage;
}

/** Performs one step; returns what made it impossible, if anything. */
export async function performStep(run: PathRunner, step: WalkStep): Promise<string | undefined> {
	const agent = run.agent;
	const event = step.event;
	try {
		switch (event.type) {
			case "prompt": {
				const prompted = agent.prompt(event.messages.map((message) => fresh(run, message)));
				ignore(prompted);
				const refused = await refusedPrompt(agent, prompted);
				if (refused) throw refused;
				return undefined;
			}
			case "continue":
				ignore(agent.continue());
				return undefined;
			case "update":
				return undefined; // the agent sends `update` itself before every prompt, continue and compact
			case "reset":
				agent.reset(); // the run's ledger hears of it, as of a clear by your code
				return undefined;
			case "queue.clear":
				agent.clearAllQueues();
				return undefined;
			case "queue.mode":
				agent.followUpMode = event.mode;
				return undefined;
			case "compact":
				ignore(agent.compact());
				return undefined;
			case "steer":
			case "followUp": {
				const message = fresh(run, event.message);
				run.ledger.track(message, event.type);
				if (event.type === "steer") agent.steer(message);
				else agent.followUp(message);
				return undefined;
			}
			case "abort":
				agent.abort();
				return undefined;
			case "dispose":
				agent.dispose();
				return undefined;
			case "listener.error":
				// What the agent sends when a listener throws.
				run.send({ type: "listener.error", error: SIMULATED_LISTENER_FAILURE });
				return undefined;
			case "delivered": {
				const barrier = () => agent.actor.getSnapshot().context.barrier;
				if (!(await run.until(() => (run.heldAck ?? -1) >= barrier()))) return "no delivery acknowledgement to release (a listener still holds the events)";
				run.send({ type: "delivered", barrier: run.heldAck ?? barrier() });
				return undefined;
			}
			case "approve":
			case "reject": {
				// The Agent throws for it: sent to its machine, as to a bare one.
				if (event.toolCallId === NO_SUCH_CALL) {
					run.send(event);
					return undefined;
				}
				const real = realCall(run, event.toolCallId, step.from);
				if (!real) return `no real call for ${event.toolCallId}`;
				if (event.type === "approve") void agent.approve(callKeyOf(real));
				else void agent.reject(callKeyOf(real), event.reason);
				return undefined;
			}
			case "approval.timeout":
				withClockPastDeadlines(() => run.send(event));
				return undefined;
			case "agentchart.resumed":
			case "tools.abandon":
			case "tools.interrupted":
				run.send(event);
				return undefined;
			case "stream.interrupted": {
				const attempt = agent.actor.getSnapshot().context.run?.attempt;
				if (attempt === undefined) return "no run to interrupt";
				run.invariants.restored();
				run.send({ type: "stream.interrupted", attempt });
				return undefined;
			}
			case "stream.start":
			case "stream.toolcall":
			case "stream.done":
				return await performStream(run, event);
			case "tool.prepared":
				return await preparedOrBlocked(run, step, event.callKey, event.approval ? { approval: "required", reason: event.approval.reason } : undefined);
			case "tool.settled":
				// beforeToolCall blocking the call it was asked about (tool-preparing).
				if (abstractCall(step.from, event.callKey)?.status === "preparing") return await preparedOrBlocked(run, step, event.callKey, { block: true, reason: "blocked" });
				return await performOnRunningCall(run, step, event);
			case "tool.update":
			case "tool.timeout":
			case "tool.approval":
			case "tool.executing":
				return await performOnRunningCall(run, step, event);
			default: {
				const type = (event as { type: string }).type;
				if (type === "xstate.done.actor.compaction" || type === "xstate.error.actor.compaction") return await performCompactionEnd(run, step, type === "xstate.error.actor.compaction", (event as { error?: unknown }).error);
				return `no way to perform ${type} on an agent`;
			}
		}
	} catch (error) {
		// A mistake of the test (your agent refused the prompt) goes to exploreAgent's caller.
		if (isFactoryMistake(error)) throw error;
		return `${step.label} threw: ${describeError(error)}`;
	}
}

/** The hook's answer about the call being prepared. */
async function preparedOrBlocked(run: PathRunner, step: WalkStep, key: string, answer: BeforeToolCallResult | undefined): Promise<string | undefined> {
	const real = realCall(run, key, step.from);
	if (!real) return `no real call for ${key}`;
	return releaseHook(run, real.toolCall.id, answer);
}
