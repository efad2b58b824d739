/**
 * The abstract state of the agent chart: what the walk's graph is made of and what a real run is
 * compared with after every step. It keeps what decides the chart's next steps (state, queues,
 * the run's flags, its calls' statuses) and leaves out what does not (texts, ids, timestamps),
 * so the state space stays finite.
 */
import type { AnyMachineSnapshot } from "xstate";
import { agentMachine } from "../../machines/agent-machine.js";
import { tokensNeedCompaction } from "../../machines/compaction-guards.js";
import type { AgentMachineEvent, ToolCallEntry } from "../../machines/types.js";
import type { AnyAgentTool } from "../../types/agent.js";
import type { AgentMessage, AssistantMessage } from "../../types/messages.js";
import type { ModelConfig } from "./config.js";
import { statesEntering } from "./definition.js";
import { callsOf, MISSING_TOOL, OVERFLOW_ERROR, replyKindOf } from "./fixtures.js";
import { journalMark } from "./journaled-calls.js";
import { sampleOf } from "./replies.js";

/** The decision states: each emits a barrier on entry and stays until it is acknowledged (read from the chart, so none is left out). */
const BARRIER_STATES = statesEntering(agentMachine, "emitBarrier");

export function inState(snapshot: AnyMachineSnapshot, value: string): boolean {
	return snapshot.matches(value as never);
}

/**
 * The machine waits for the consumer to acknowledge its last barrier (`delivered`): at a decision
 * state, or (streaming mode) with calls announced that start once their listeners have them.
 */
export function awaitsDelivery(snapshot: AnyMachineSnapshot): boolean {
	if (!snapshot.context.awaitDelivery) return false;
	return BARRIER_STATES.some((state) => inState(snapshot, state)) || snapshot.context.run?.batch?.calls.some((call: ToolCallEntry) => call.status === "announced") === true;
}

function valueOf(snapshot: AnyMachineSnapshot): string {
	return typeof snapshot.value === "string" ? snapshot.value : JSON.stringify(snapshot.value);
}

/** A sample's mark in a state or label: none when the configuration has one sample. */
function sampleMark(config: ModelConfig, sample: number): string {
	if (sample < 0) return "?";
	return config.samples.length > 1 ? String(sample) : "";
}

function kindOf(config: ModelConfig, message: AssistantMessage | undefined): string {
	if (!message) return "-";
	const calls = callsOf(message);
	const missing = calls.some((call) => call.name === MISSING_TOOL) ? "?" : "";
	const samples = config.samples.length > 1 ? calls.map((call) => sampleMark(config, sampleOf(config, call))).join("") : "";
	return `${message.stopReason}${calls.length}${missing}${samples}${message.errorMessage && /too long/.test(message.errorMessage) ? "!" : ""}`;
}

/** `journaled`: the run may be restored while its reply streams, and how its settled calls stand in the journal decides what the restore does. */
function callView(config: ModelConfig, call: ToolCallEntry, journaled: boolean, tools: AnyAgentTool[]): string {
	const sample = config.samples.length > 1 ? `${sampleMark(config, sampleOf(config, call.toolCall))}:` : "";
	// A running call without arguments is still being prepared by the batch actor (streaming mode with a hook).
	const preparing = call.status === "running" && call.args === undefined ? "p" : "";
	return `${sample}${call.status}${call.started ? "s" : ""}${call.message ? "m" : ""}${call.outcome?.result.terminate ? "T" : ""}${preparing}${journaled ? journalMark(tools, call) : ""}`;
}

/**
 * The projection the traversal and the real-run comparison both use. `transcript`: the agent's
 * own (an idle Agent keeps the transcript, and hands it to its machine with the next command).
 */
export function project(config: ModelConfig, snapshot: AnyMachineSnapshot, transcript?: AgentMessage[]): string {
	const context = transcript ? { ...snapshot.context, messages: transcript } : snapshot.context;
	const run = context.run;
	const last = context.messages[context.messages.length - 1] as { role?: string } | undefined;
	const journaled = config.restores && run?.batch?.mode === "streaming" && inState(snapshot, "running.streaming");
	return JSON.stringify({
		st: snapshot.status,
		v: valueOf(snapshot),
		s: context.steeringQueue.length,
		f: context.followUpQueue.length,
		tail: last?.role ?? "none",
		wait: awaitsDelivery(snapshot),
		big: tokensNeedCompaction(context),
		run: run && {
			ab: run.aborted,
			p: run.partial !== undefined,
			a: kindOf(config, run.assistant),
			te: run.turnEnded,
			cr: run.compactionReason ?? "",
			or: run.overflowRetried,
			ct: run.compactedThisTurn === true,
			ol: run.outputLimitAttempts ?? 0,
			// K: the run began with queued steering, and takes none again before its first call (read at its start only).
			q: `${run.skipInitialSteeringPoll && inState(snapshot, "running.run-starting") ? "K" : ""}${run.steeringPolled ? "S" : ""}${run.followUpsPolled ? "F" : ""}${run.stopAsked ? "A" : ""}${run.stopRequested ? "R" : ""}`,
			b: run.batch && {
				m: run.batch.mode,
				t: run.batch.truncated,
				c: run.batch.calls.map((call: ToolCallEntry) => callView(config, call, journaled, context.tools)).join(" "),
			},
		},
	});
}

/** What each field of a projection is, in words (see {@link project}). */
const FIELD_NAMES: ReadonlyMap<string, string> = new Map([
	["st", "status"],
	["v", "state"],
	["s", "steering messages queued"],
	["f", "follow-ups queued"],
	["tail", "last message"],
	["wait", "waiting for listeners"],
	["big", "context over the compaction threshold"],
	["run", "run"],
	["run.ab", "run aborted"],
	["run.p", "a reply streaming"],
	["run.a", "the reply"],
	["run.te", "turn ended"],
	["run.cr", "compacting for"],
	["run.or", "overflow retried"],
	["run.ct", "compacted this turn"],
	["run.ol", "output-limit retries"],
	["run.q", "queues polled"],
	["run.b", "tool batch"],
	["run.b.m", "tool batch mode"],
	["run.b.t", "tool batch cut off"],
	["run.b.c", "tool calls"],
]);

/**
 * Where the agent and the walk's model of it part, in words: each field of the two projections
 * that differs, the agent's reading first (`state running.awaiting-approval, the model's
 * running.turn-ended`). A report says this rather than the projections' own short keys.
 *
 * @example
 * describeDifference(project(config, realSnapshot), step.toKey); // "last message assistant, the model's toolResult"
 */
export function describeDifference(real: string, model: string): string {
	const differences: string[] = [];
	const walk = (a: unknown, b: unknown, path: string) => {
		const objects = typeof a === "object" && a !== null && typeof b === "object" && b !== null;
		if (objects) {
			for (const key of new Set([...Object.keys(a), ...Object.keys(b)])) walk((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key], path ? `${path}.${key}` : key);
			return;
		}
		if (JSON.stringify(a) === JSON.stringify(b)) return;
		const shown = (value: unknown) => {
			if (value === undefined || value === null) return "none";
			if (typeof value === "object") return "in progress";
			if (typeof value === "string") return (READABLE_VALUES.get(path) ?? ((text: string) => text || "none"))(value);
			return String(value);
		};
		differences.push(`${FIELD_NAMES.get(path) ?? path} ${shown(a)}, the model's ${shown(b)}`);
	};
	try {
		walk(JSON.parse(real), JSON.parse(model), "");
	} catch {
		return `the agent ${real}, the model ${model}`;
	}
	return differences.join("; ") || "no field differs";
}

/** The statuses a tool call's view begins with (see `callView`), longest first: "prepared" is not "preparing" cut short. */
const CALL_STATUSES = ["awaiting-approval", "announced", "preparing", "prepared", "running", "settled", "queued"] as const;

/** The marks after a call's status (see `callView` and `journalMark`), in words. */
const CALL_MARKS: ReadonlyMap<string, string> = new Map([
	["s", "started"],
	["m", "its result emitted"],
	["T", "ends the run"],
	["p", "being prepared"],
	["x", "rejected in the journal"],
	["w", "journaled, not run"],
	["j", "its outcome journaled"],
	["c", "run, outcome not journaled"],
]);

/**
 * A tool batch's calls in words: `0:runnings 1:settledsm` → `sample call 0 running (started)
 * and sample call 1 settled (started, its result emitted)`. A report reader never saw the walk's codes.
 */
function readableCalls(value: string): string {
	if (value === "") return "none";
	return value
		.split(" ")
		.map((view) => {
			const [, sample, rest = view] = /^(?:(\d+|\?):)?(.*)$/.exec(view) ?? [];
			const status = CALL_STATUSES.find((each) => rest.startsWith(each));
			if (!status) return view;
			const marks = [...rest.slice(status.length)].map((mark) => CALL_MARKS.get(mark) ?? mark);
			const who = sample === undefined ? "a call" : sample === "?" ? "a call of no sample call" : `sample call ${sample}`;
			return `${who} ${status}${marks.length ? ` (${marks.join(", ")})` : ""}`;
		})
		.join(" and ");
}

/** The queue polls of a run (see `project`'s `q`) in words. */
const QUEUE_MARKS: ReadonlyMap<string, string> = new Map([
	["K", "steering taken at the start"],
	["S", "steering polled"],
	["F", "follow-ups polled"],
	["A", "stop asked"],
	["R", "stop requested"],
]);

function readableQueues(value: string): string {
	return value === "" ? "none" : [...value].map((mark) => QUEUE_MARKS.get(mark) ?? mark).join(", ");
}

/** Fields whose projected values are codes, with what turns them into words. */
const READABLE_VALUES: ReadonlyMap<string, (value: string) => string> = new Map([
	["v", (value: string) => readableState(value)],
	["run.b.c", readableCalls],
	["run.q", readableQueues],
]);

/** A state value as a path: `{"running":"awaiting-approval"}` → `running.awaiting-approval`. */
function readableState(value: string): string {
	try {
		let state: unknown = JSON.parse(value);
		const parts: string[] = [];
		while (typeof state === "object" && state !== null) {
			const [key, inner] = Object.entries(state)[0] ?? [];
			if (key === undefined) break;
			parts.push(key);
			state = inner;
		}
		if (typeof state === "string") parts.push(state);
		return parts.join(".");
	} catch {
		return value;
	}
}

/** A short, distinct label of an abstract event (payload kinds, not payload objects). */
export function eventLabel(config: ModelConfig, event: AgentMachineEvent): string {
	switch (event.type) {
		case "prompt":
			return event.messages[0] === config.bigPrompt ? "prompt(big)" : "prompt";
		case "stream.toolcall":
			return `stream.toolcall(${event.toolCall.id}${sampleMark(config, sampleOf(config, event.toolCall)) ? `:${sampleMark(config, sampleOf(config, event.toolCall))}` : ""})`;
		case "stream.done": {
			const kind = replyKindOf(event.message);
			const calls = callsOf(event.message);
			const marks = config.samples.length > 1 ? calls.map((call) => sampleMark(config, sampleOf(config, call))).join(",") : "";
			const count = kind === "tools" || kind === "length" || kind === "missing" ? String(calls.length) : "";
			return `stream.done(${kind}${count}${marks ? `:${marks}` : ""})`;
		}
		case "tool.prepared":
			return `tool.prepared(${event.callKey}${event.approval ? ",approval" : ""})`;
		case "tool.settled":
			return `tool.settled(${event.callKey},${event.outcome.result.terminate ? "terminate" : event.outcome.isError ? "error" : "ok"})`;
		case "tool.update":
		case "tool.timeout":
		case "tool.approval":
		case "tool.executing":
			return `${event.type}(${event.callKey})`;
		case "approve":
		case "reject":
			return `${event.type}(${event.toolCallId})`;
		default: {
			const type = (event as { type: string }).type;
			const output = (event as { output?: unknown }).output;
			// Poll answers: how many messages, or the stop decision.
			if (type.startsWith("xstate.done.actor.") && (Array.isArray(output) || typeof output === "boolean")) return `${type}(${Array.isArray(output) ? output.length : String(output)})`;
			if (type === "xstate.error.actor.compaction" && (event as { error?: { interruptedByRestart?: boolean } }).error?.interruptedByRestart) return `${type}(interrupted)`;
			return type;
		}
	}
}

/** True for an overflow reply of the model. */
export function isOverflowReply(message: AssistantMessage): boolean {
	return message.errorMessage === OVERFLOW_ERROR;
}
