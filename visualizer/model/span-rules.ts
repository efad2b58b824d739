/**
 * Which emitted AgentEvents open and close the timeline's bars and the transcript's span rows.
 * Data, not code paths: a new kind of wait (an approval) is one more rule, and the timeline,
 * the transcript and the selection pick it up.
 */
import type { PreviewJson } from "../../src/inspect/summarize.js";
import type { SpanStatus } from "./types.js";

/** An emitted event as a record carries it. */
export type EmittedEvent = { type: string; [key: string]: PreviewJson };

/** How one kind of span is recognised and shown. */
export interface SpanRule {
	/** The span kind, also its timeline lane (see LANES). */
	kind: string;
	/** The event type that opens a span. */
	starts: string;
	/** Event types that close the open span with the same key. */
	ends: readonly string[];
	/** Event types that report progress on the open span (its output so far). */
	updates?: readonly string[] | undefined;
	/** Tells concurrent spans of a kind apart (a tool call's id). */
	key(event: EmittedEvent): string;
	label(event: EmittedEvent): string;
	/** How the closing event says it ended. */
	outcome(event: EmittedEvent): SpanStatus;
	/** What an open span of this kind is doing, in its bar and row (default `running`). */
	openWord?: string | undefined;
	/**
	 * The kind of span this one holds up while open: the open span of that kind with the same
	 * key says it waits for this one (a tool call waiting for its approval).
	 */
	holds?:
		| {
				kind: string;
				openWord: string;
				target(event: EmittedEvent): { key: string; occurrence: number };
				/**
				 * What the end of this span does to the one it held: a no makes it end next (its end comes at
				 * once), and what it goes on with (arguments a person gave) replaces its input.
				 */
				release?(event: EmittedEvent): { endsNext: boolean; input?: PreviewJson | undefined };
		  }
		| undefined;
	/** A transcript row for each span, with what went in and what came out. */
	transcript?: {
		title(event: EmittedEvent): string;
		input?(event: EmittedEvent): PreviewJson | undefined;
		output?(event: EmittedEvent): PreviewJson | undefined;
	};
}

function text(value: PreviewJson | undefined, fallback = ""): string {
	return typeof value === "string" ? value : value === undefined || value === null ? fallback : JSON.stringify(value);
}

/**
 * How `approval_resolved` ended the wait: `approved` is the only yes; `rejected` and
 * `timed-out` are noes (the call does not run); `aborted` went with the run.
 */
function approvalOutcome(event: EmittedEvent): SpanStatus {
	const decision = event["decision"];
	return decision === "approved" ? "done" : decision === "aborted" ? "stopped" : "error";
}

/** The decision in words, with the reason given for it: `rejected: not on a Friday`. */
function approvalDecision(event: EmittedEvent): string {
	const decision = `${text(event["decision"], "decided").replace("-", " ")}${event["argumentsGiven"] === true ? " with changed arguments" : ""}`;
	const reason = event["reason"];
	return typeof reason === "string" && reason !== "" ? `${decision}: ${reason}` : decision;
}

/**
 * An approval's key is its call's `callKey` (`d1#1`, `d1#2` for a repeated id), which tells two
 * calls with one id apart whatever order they are decided in. Events without one (recordings made
 * before approvals carried it) are keyed as the first call with their id.
 */
function approvalKey(event: EmittedEvent): string {
	const key = event["callKey"];
	return typeof key === "string" && key !== "" ? key : `${text(event["toolCallId"], "approval")}#1`;
}

/**
 * The tool span an approval holds up: tool events carry only the id (pi's shape), so the call is
 * told by its place among the calls with that id, which its `callKey` says (`d1#2`: the second
 * `d1` of the reply). Events without a key (recordings made before approvals carried it): the first.
 */
function heldToolCall(event: EmittedEvent): { key: string; occurrence: number } {
	const id = text(event["toolCallId"]);
	const key = event["callKey"];
	const suffix = typeof key === "string" && key.startsWith(`${id}#`) ? key.slice(id.length + 1) : "";
	return { key: id, occurrence: /^\d+$/.test(suffix) ? Number(suffix) : 1 };
}

/**
 * How a decision releases the tool call it held: a no ends it at once (its `tool_execution_end`
 * comes next for its id, before that of a call with the id that runs); arguments a person gave are
 * what it runs with.
 */
function releasedToolCall(event: EmittedEvent): { endsNext: boolean; input?: PreviewJson | undefined } {
	const endsNext = event["decision"] !== "approved";
	return event["argumentsGiven"] === true && event["args"] !== undefined ? { endsNext, input: event["args"] } : { endsNext };
}

/**
 * The span kinds, in lane order. Model calls are not here: they are the stream actor's life
 * (from its start to the reply's end), which no single emitted event opens.
 */
export const SPAN_RULES: readonly SpanRule[] = [
	{ kind: "run", starts: "agent_start", ends: ["agent_end"], key: () => "run", label: () => "run", outcome: () => "done" },
	{ kind: "turn", starts: "turn_start", ends: ["turn_end"], key: () => "turn", label: () => "turn", outcome: () => "done" },
	{
		kind: "tool",
		starts: "tool_execution_start",
		ends: ["tool_execution_end"],
		updates: ["tool_execution_update"],
		key: (event) => text(event["toolCallId"]),
		label: (event) => text(event["toolName"], "tool"),
		outcome: (event) => (event["isError"] === true ? "error" : "done"),
		transcript: {
			title: (event) => text(event["toolName"], "tool"),
			input: (event) => event["args"],
			output: (event) => event["result"] ?? event["partialResult"],
		},
	},
	{
		// Waiting for a person to approve a tool call: `approval_requested` … `approval_resolved`
		// (src/types/agent.ts). The call it holds up says so instead of `running`.
		kind: "approval",
		starts: "approval_requested",
		ends: ["approval_resolved"],
		key: approvalKey,
		label: (event) => `approval · ${text(event["toolName"], "tool call")}`,
		outcome: approvalOutcome,
		openWord: "waiting",
		holds: { kind: "tool", openWord: "waiting for approval", target: heldToolCall, release: releasedToolCall },
		transcript: {
			title: (event) => `approval for ${text(event["toolName"], "a tool call")}`,
			input: (event) => event["args"],
			output: approvalDecision,
		},
	},
	{
		kind: "compaction",
		starts: "auto_compaction_start",
		ends: ["auto_compaction_end"],
		key: () => "compaction",
		label: (event) => `compaction (${text(event["reason"], "?")})`,
		outcome: (event) => (event["aborted"] === true ? "stopped" : event["errorMessage"] !== undefined ? "error" : "done"),
		transcript: {
			title: (event) => `compaction (${text(event["reason"], "?")})`,
			output: (event) => event["result"] ?? event["errorMessage"],
		},
	},
];

/** Timeline lanes, top to bottom: the rules' kinds with the model calls after the turns. */
export const LANES: readonly { kind: string; title: string }[] = [
	{ kind: "run", title: "Run" },
	{ kind: "turn", title: "Turns" },
	{ kind: "model", title: "Model" },
	{ kind: "tool", title: "Tools" },
	{ kind: "approval", title: "Approvals" },
	{ kind: "compaction", title: "Compaction" },
];

/** Rules by the event types they react to. */
export const RULES_BY_EVENT: ReadonlyMap<string, { rule: SpanRule; role: "start" | "end" | "update" }[]> = (() => {
	const byEvent = new Map<string, { rule: SpanRule; role: "start" | "end" | "update" }[]>();
	const add = (type: string, rule: SpanRule, role: "start" | "end" | "update") => byEvent.set(type, [...(byEvent.get(type) ?? []), { rule, role }]);
	for (const rule of SPAN_RULES) {
		add(rule.starts, rule, "start");
		for (const type of rule.ends) add(type, rule, "end");
		for (const type of rule.updates ?? []) add(type, rule, "update");
	}
	return byEvent;
})();
