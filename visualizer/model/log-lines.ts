/**
 * What the event log says about a record: a category (for the filters), a title (the event
 * type, or `always` for an eventless step), who sent it to whom, a one-line summary a person
 * can read, and the payload to expand. Records the log leaves out return undefined.
 */
import type { InspectionRecord, TakenTransition } from "../../src/inspect/records.js";
import type { PreviewJson } from "../../src/inspect/summarize.js";
import { type ChartIndex, stateName } from "./chart-index.js";
import { contentText } from "./messages.js";

/** The log's filter categories. */
export type LogCategory = "received" | "emitted" | "transition" | "actor" | "delta";

/** One line of the log. */
export interface LogLine {
	category: LogCategory;
	/** The event type; `always` for an eventless step. */
	title: string;
	who: string;
	summary: string;
	/** Shown pretty-printed when the row is expanded. */
	payload?: PreviewJson | undefined;
	/** An eventless step: `cause` names the event whose step it was part of. */
	eventless?: boolean | undefined;
	cause?: string | undefined;
	tone?: "error" | undefined;
}

type Json = { [key: string]: PreviewJson };
const isObject = (value: PreviewJson | undefined): value is Json => typeof value === "object" && value !== null && !Array.isArray(value);
const str = (value: PreviewJson | undefined) => (typeof value === "string" ? value : "");

/** A value on one line, cut to `max` characters. */
export function oneLine(value: PreviewJson | undefined, max = 160): string {
	const text = typeof value === "string" ? JSON.stringify(value) : JSON.stringify(value ?? null);
	return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

function quote(text: string, max = 80): string {
	const flat = text.replace(/\s+/g, " ").trim();
	return `"${flat.length > max ? `${flat.slice(0, max - 1)}…` : flat}"`;
}

/** A message in a few words: role, text, tool calls. */
export function messageSummary(message: PreviewJson | undefined): string {
	if (!isObject(message)) return "";
	const role = str(message["role"]) || "message";
	const content = message["content"];
	const calls = Array.isArray(content) ? content.filter((block) => isObject(block) && block["type"] === "toolCall").length : 0;
	const text = contentText(Array.isArray(content) ? content.filter((block) => !isObject(block) || block["type"] === "text") : content);
	const parts = [`${role}:`];
	if (text) parts.push(quote(text));
	if (calls > 0) parts.push(`${text ? "+ " : ""}${calls} tool call${calls > 1 ? "s" : ""}`);
	const stop = str(message["stopReason"]);
	if (stop && stop !== "stop" && stop !== "toolUse") parts.push(`(${stop}${message["errorMessage"] ? `: ${str(message["errorMessage"])}` : ""})`);
	return parts.join(" ");
}

/** A tool result's text, or its JSON. */
function resultSummary(result: PreviewJson | undefined): string {
	if (isObject(result) && result["content"] !== undefined) return quote(contentText(result["content"]));
	return oneLine(result, 80);
}

function emittedSummary(event: Json & { type: string }): string {
	switch (event.type) {
		case "message_start":
		case "message_end":
			return messageSummary(event["message"]);
		case "tool_execution_start":
			return `${str(event["toolName"])} ${oneLine(event["args"], 100)}`;
		case "tool_execution_update":
			return `${str(event["toolName"])} … ${resultSummary(event["partialResult"])}`;
		case "tool_execution_end":
			return `${str(event["toolName"])} ${event["isError"] === true ? "failed:" : "→"} ${resultSummary(event["result"])}`;
		case "turn_end": {
			const results = Array.isArray(event["toolResults"]) ? event["toolResults"].length : 0;
			return `${messageSummary(event["message"])}${results > 0 ? `; ${results} tool result${results > 1 ? "s" : ""}` : ""}`;
		}
		case "agent_end":
			return Array.isArray(event["messages"]) ? `${event["messages"].length} new messages` : "";
		case "approval_requested":
			return `${str(event["toolName"])} ${oneLine(event["args"], 100)}${event["reason"] !== undefined ? ` (${str(event["reason"])})` : ""}`;
		case "approval_resolved":
			return `${str(event["toolName"])} ${str(event["decision"]).replace("-", " ")}${event["reason"] !== undefined ? `: ${str(event["reason"])}` : ""}`;
		default: {
			const { type: _type, ...rest } = event;
			return Object.keys(rest).length > 0 ? oneLine(rest) : "";
		}
	}
}

function receivedSummary(event: Json & { type: string }): string {
	const { type: _type, ...rest } = event;
	if (isObject(rest["message"])) return messageSummary(rest["message"]);
	if (isObject(rest["messages"]) || Array.isArray(rest["messages"])) return `${Array.isArray(rest["messages"]) ? rest["messages"].map(messageSummary).join(" · ") : ""}`;
	if (isObject(rest["toolCall"])) return `${str(rest["toolCall"]["name"])} ${oneLine(rest["toolCall"]["arguments"], 100)}`;
	return Object.keys(rest).length > 0 ? oneLine(rest) : "";
}

/** `source → target [guard]` for the transitions of a microstep. */
export function transitionSummary(chart: ChartIndex, transitions: readonly TakenTransition[]): string {
	return transitions
		.map((transition) => {
			const targets = transition.targetIds.map((id) => stateName(chart, id)).join(", ");
			const guard = chart.edges.get(transition.edgeId)?.guard;
			return `${stateName(chart, transition.sourceId)} → ${targets}${guard ? `  [${guard}]` : ""}`;
		})
		.join("; ");
}

/** Whether a microstep took only eventless (`always`) transitions. */
export function isEventless(transitions: readonly TakenTransition[]): boolean {
	return transitions.length > 0 && transitions.every((transition) => transition.eventType === "");
}

/**
 * The log line for a record, or undefined when the log leaves it out (snapshots, actor init
 * events, transitions without a target: their event has a line of its own).
 *
 * @example
 * describeRecord(record, { chart, nameOf: (id) => names[id] ?? id })?.title; // "always"
 */
export function describeRecord(record: InspectionRecord, context: { chart: ChartIndex; nameOf(sessionId: string | undefined): string }): LogLine | undefined {
	const { nameOf } = context;
	switch (record.type) {
		case "@xstate.event": {
			const { type } = record.event;
			if (type.startsWith("xstate.init") || type === "xstate.promise.resolve") return undefined;
			const inner = record.event["event"];
			const category: LogCategory = type === "stream.event" && !(isObject(inner) && inner["type"] === "start") ? "delta" : "received";
			const { type: _type, ...payload } = record.event;
			return { category, title: type, who: `${nameOf(record.sourceId)} → ${nameOf(record.sessionId)}`, summary: receivedSummary(record.event), payload };
		}
		case "@agentchart.emitted": {
			const { type } = record.event;
			const category: LogCategory = type === "message_update" || type === "agentchart.barrier" ? "delta" : "emitted";
			const { type: _type, ...payload } = record.event;
			const failed =
				(type === "tool_execution_end" && record.event["isError"] === true) ||
				(type === "approval_resolved" && record.event["decision"] !== "approved") ||
				(isObject(record.event["message"]) && record.event["message"]["stopReason"] === "error");
			// Re-told from the agent's state at attach, not emitted then: the row says so.
			const who = record.restored === true ? `${nameOf(record.sessionId)} · restored at attach` : `${nameOf(record.sessionId)} emits`;
			return { category, title: type, who, summary: emittedSummary(record.event), payload, tone: failed ? "error" : undefined };
		}
		case "@xstate.microstep": {
			const moving = record.transitions.filter((transition) => transition.targetIds.length > 0);
			if (moving.length === 0) return undefined;
			const eventless = isEventless(moving);
			// XState reports an eventless step with the event whose macrostep it belongs to: say so
			// instead of naming the step after that event.
			const title = eventless ? "always" : moving[0]?.eventType || record.event.type;
			const line: LogLine = { category: "transition", title, who: nameOf(record.sessionId), summary: transitionSummary(context.chart, moving), payload: { transitions: moving.map((transition) => ({ ...transition })) } };
			if (eventless) {
				line.eventless = true;
				if (record.event.type) line.cause = record.event.type;
			}
			return line;
		}
		case "@xstate.actor":
			return { category: "actor", title: "spawn", who: nameOf(record.parentId), summary: `${record.actorId}${record.src ? ` (${record.src})` : ""}`, payload: { sessionId: record.sessionId, actorId: record.actorId, src: record.src ?? null } };
		case "@xstate.snapshot":
			if (record.snapshot.status === "active") return undefined;
			return { category: "actor", title: record.snapshot.status, who: nameOf(record.sessionId), summary: `${nameOf(record.sessionId)} is ${record.snapshot.status}`, payload: { status: record.snapshot.status, value: record.snapshot.value ?? null, output: record.snapshot.output ?? null, error: record.snapshot.error ?? null }, tone: record.snapshot.status === "error" ? "error" : undefined };
		case "@agentchart.deltas":
			return {
				category: "delta",
				title: "message_update",
				who: `${nameOf(record.sessionId)} streams`,
				summary: `×${record.count} (${record.chars} characters)${record.segments?.length ? ` ${quote(record.segments.map((segment) => segment.text).join(""), 60)}` : ""}`,
				payload: record.segments ? { segments: record.segments.map((segment) => ({ ...segment })) } : undefined,
			};
		case "@agentchart.dropped":
			return { category: "actor", title: "dropped", who: "inspector", summary: `${record.count} events lost in a burst`, tone: "error" };
		default:
			return undefined;
	}
}
