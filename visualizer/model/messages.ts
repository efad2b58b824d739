/**
 * The conversation: message events become transcript entries; delta records grow the
 * streaming reply; the reply's end replaces what streamed with the message as it ended.
 */
import type { DeltaSegment } from "../../src/inspect/records.js";
import type { PreviewJson } from "../../src/inspect/summarize.js";
import type { EmittedEvent } from "./span-rules.js";
import { type RecordPlace, addEntry, closeSpan, findEntry, markFirstToken, openModelOf } from "./spans.js";
import type { AssistantBlock, AssistantEntry, RunModel } from "./types.js";

type JsonObject = { [key: string]: PreviewJson };

function isObject(value: PreviewJson | undefined): value is JsonObject {
	return typeof value === "object" && value !== null && !Array.isArray(value);
}

const str = (value: PreviewJson | undefined) => (typeof value === "string" ? value : "");

/**
 * A message's content as text: a string as it is, text blocks joined, other blocks named.
 *
 * @example
 * contentText([{ type: "text", text: "hi" }, { type: "image", data: "…" }]); // "hi\n[image]"
 */
export function contentText(content: PreviewJson | undefined): string {
	if (typeof content === "string") return content;
	if (!Array.isArray(content)) return content === undefined || content === null ? "" : JSON.stringify(content);
	return content
		.map((block) => {
			if (typeof block === "string") return block;
			if (!isObject(block)) return "";
			if (block["type"] === "text") return str(block["text"]);
			return `[${str(block["type"]) || "block"}]`;
		})
		.filter((part) => part !== "")
		.join("\n");
}

/** An assistant message's content as the transcript's blocks. */
export function assistantBlocks(content: PreviewJson | undefined): AssistantBlock[] {
	if (typeof content === "string") return [{ type: "text", text: content }];
	if (!Array.isArray(content)) return [];
	const blocks: AssistantBlock[] = [];
	for (const block of content) {
		if (!isObject(block)) continue;
		if (block["type"] === "text") blocks.push({ type: "text", text: str(block["text"]) });
		else if (block["type"] === "thinking") blocks.push({ type: "thinking", text: block["redacted"] === true ? "[redacted thinking]" : str(block["thinking"]) });
		else if (block["type"] === "toolCall") blocks.push({ type: "toolCall", id: str(block["id"]), name: str(block["name"]), args: block["arguments"] ?? null });
	}
	return blocks;
}

const assistantSlot = (sessionId: string) => `${sessionId} assistant`;

/** The reply streaming in a session, if any. */
export function streamingReply(model: RunModel, sessionId: string): AssistantEntry | undefined {
	const entry = findEntry(model, model.open[assistantSlot(sessionId)]);
	return entry?.kind === "assistant" ? entry : undefined;
}

/** Ends a streaming reply where it stands (the agent stopped, or the reply ended). */
export function endStreamingReply(model: RunModel, sessionId: string, seq: number): void {
	const entry = streamingReply(model, sessionId);
	delete model.open[assistantSlot(sessionId)];
	if (!entry) return;
	entry.streaming = false;
	entry.endSeq = seq;
	entry.rev++;
}

/**
 * Applies `message_start` / `message_end` to the transcript.
 *
 * @example
 * applyMessageEvent(model, place, { type: "message_start", message: { role: "user", content: "hi" } });
 */
export function applyMessageEvent(model: RunModel, place: RecordPlace, event: EmittedEvent): void {
	const message = event["message"];
	if (!isObject(message)) return;
	const role = str(message["role"]);
	const base = { seq: place.seq, endSeq: place.seq, t: place.t, run: model.currentRun, turn: model.currentTurn, rev: 0 };
	if (role === "assistant") {
		if (event.type === "message_start") {
			// Empty: the reply's text comes with the delta records. The record's copy of the message
			// may show more, because the inspector summarises at flush time a message that kept
			// growing after it was emitted.
			const entry: AssistantEntry = { ...base, id: `e${place.seq}`, kind: "assistant", blocks: [], streaming: true };
			addEntry(model, entry);
			model.open[assistantSlot(place.sessionId)] = entry.id;
			markFirstToken(model, place.sessionId, place.t, entry.id);
			return;
		}
		let entry = streamingReply(model, place.sessionId);
		if (!entry) {
			entry = { ...base, id: `e${place.seq}`, kind: "assistant", blocks: [], streaming: false };
			addEntry(model, entry);
		}
		entry.blocks = assistantBlocks(message["content"]);
		const stopReason = str(message["stopReason"]);
		if (stopReason) entry.stopReason = stopReason;
		const errorMessage = str(message["errorMessage"]);
		if (errorMessage) entry.errorMessage = errorMessage;
		endStreamingReply(model, place.sessionId, place.seq);
		const call = openModelOf(model, place.sessionId);
		if (call) {
			call.entryId ??= entry.id;
			const status = stopReason === "error" ? "error" : stopReason === "aborted" ? "stopped" : "done";
			closeSpan(model, call, place, status);
		}
		return;
	}
	// Tool results are shown with their call (tool_execution_end); repeating them adds nothing.
	if (role === "toolResult" || event.type !== "message_start") return;
	if (role === "user") {
		addEntry(model, { ...base, id: `e${place.seq}`, kind: "user", text: contentText(message["content"]) });
		return;
	}
	const text = str(message["summary"]) || contentText(message["content"]) || str(message["text"]);
	addEntry(model, { ...base, id: `e${place.seq}`, kind: "note", tone: "info", text: `${role || "message"}: ${text}`, detail: message });
}

/**
 * Grows the streaming reply with the text of a delta record.
 *
 * @example
 * applyDeltas(model, "x:0", 12, [{ kind: "text", contentIndex: 0, text: "Hel" }]);
 */
export function applyDeltas(model: RunModel, sessionId: string, seq: number, segments: readonly DeltaSegment[]): void {
	const entry = streamingReply(model, sessionId);
	if (!entry) return;
	for (const segment of segments) {
		const block = entry.blocks[segment.contentIndex];
		if (segment.kind === "toolcall") {
			if (block?.type === "toolCall") block.argsText = (block.argsText ?? "") + segment.text;
			else entry.blocks[segment.contentIndex] = { type: "toolCall", id: "", name: "", args: null, argsText: segment.text };
		} else if (block && block.type === segment.kind) {
			block.text += segment.text;
		} else {
			entry.blocks[segment.contentIndex] = { type: segment.kind, text: segment.text };
		}
	}
	// A delta for a block past the end leaves holes: fill them so views can walk the list.
	for (let index = 0; index < entry.blocks.length; index++) entry.blocks[index] ??= { type: "text", text: "" };
	entry.endSeq = seq;
	entry.rev++;
}
