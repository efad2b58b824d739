/**
 * The load signature: a record whose message snapshot is ahead of its own event.
 *
 * pi's coding agent serializes each event later, from a promise queue, and the assistant message
 * in a `message_start`/`message_update` record is pi-ai's live object, which the provider keeps
 * filling as more of the stream is parsed. When the machine is busy, two or more SSE events
 * reach the agent in one socket read (the server's 50 ms gaps are not kept), the provider parses
 * them back to back, and the record of the first event shows the text of the later ones: a
 * `text_start` whose block already has text, a block that has already lost its streaming `index`.
 * Which events share a read is up to the OS scheduler, so such a record differs from run to run,
 * on either engine, and says nothing about the engine.
 *
 * The events' own fields (`delta`, `contentIndex`, the event type) are immutable, so the state
 * each snapshot should show is rebuilt from them; a record is ahead when its snapshot holds
 * more than that state (more blocks, longer text, a signature or an end the events have not
 * reached). Shapes are those of pi-ai's Anthropic provider, the only one the scenarios use.
 *
 * The same holds for a tool's streamed output: the scenarios' shell commands write one line at a
 * time, at least 0.4 s apart, and pi's bash tool reports what each pipe read brought (at most
 * every 100 ms). A `tool_execution_update` that adds two lines at once shows two writes read
 * as one: the agent's process was held up longer than the gap.
 */
import type { Json, JsonObject } from "./harness.js";

function asObject(value: Json | undefined): JsonObject | undefined {
	return value !== null && typeof value === "object" && !Array.isArray(value) ? value : undefined;
}

/** What the events so far say one content block holds. */
interface BlockState {
	/** The accumulated `delta`s (text, thinking, or the tool call's JSON). */
	text: string;
	ended: boolean;
}

/** The field of a block its deltas accumulate into. */
function streamedField(block: JsonObject): "text" | "thinking" | "partialJson" | undefined {
	switch (block["type"]) {
		case "text":
			return "text";
		case "thinking":
			return "thinking";
		case "toolCall":
			return "partialJson";
		default:
			return undefined;
	}
}

/** Why a snapshot is ahead of `blocks` (the state after its own event), or undefined. */
function aheadOf(message: JsonObject | undefined, blocks: readonly BlockState[]): string | undefined {
	const content = message?.["content"];
	if (!Array.isArray(content)) return undefined;
	if (content.length > blocks.length) return `${content.length} content blocks where its events started ${blocks.length}`;
	for (const [index, state] of blocks.entries()) {
		const block = asObject(content[index]);
		if (!block) continue;
		if (state.ended) continue;
		if (!("index" in block) || (block["type"] === "toolCall" && !("partialJson" in block))) return `block ${index} already ended`;
		const field = streamedField(block);
		const streamed = field === undefined ? undefined : block[field];
		if (typeof streamed === "string" && streamed !== state.text) return `block ${index} holds ${JSON.stringify(streamed)} where its events gave ${JSON.stringify(state.text)}`;
		const signature = block["thinkingSignature"];
		if (typeof signature === "string" && signature !== "") return `block ${index} already has its signature`;
	}
	return undefined;
}

/** The text of a tool result's content, or undefined when it has none. */
function resultText(result: JsonObject | undefined): string | undefined {
	const content = result?.["content"];
	if (!Array.isArray(content)) return undefined;
	const first = asObject(content[0]);
	return typeof first?.["text"] === "string" ? first["text"] : "";
}

/** Why an update shows two writes read as one (more than one line added), or undefined. */
function linesAtOnce(record: JsonObject, seen: Map<string, string>): string | undefined {
	const id = String(record["toolCallId"]);
	const text = resultText(asObject(record["partialResult"]));
	if (text === undefined) return undefined;
	const before = seen.get(id) ?? "";
	seen.set(id, text);
	const added = text.startsWith(before) ? text.slice(before.length) : text;
	const lines = added.split("\n").filter((line) => line !== "").length;
	return lines > 1 ? `${id} output grew by ${lines} lines at once` : undefined;
}

/**
 * The first record whose snapshot is ahead of its event, as `record <n> (<type>): <why>`, or
 * undefined when every snapshot shows exactly its own point of the stream.
 *
 * @example
 * loadSignature(observation.records); // "record 6 (message_update:text_start): block 0 holds \"Partial \" where its events gave \"\""
 */
export function loadSignature(records: readonly JsonObject[]): string | undefined {
	let blocks: BlockState[] = [];
	const toolOutput = new Map<string, string>();
	for (const [position, record] of records.entries()) {
		const type = record["type"];
		if (type === "tool_execution_update") {
			const why = linesAtOnce(record, toolOutput);
			if (why !== undefined) return `record ${position} (tool_execution_update): ${why}`;
			continue;
		}
		const message = asObject(record["message"]);
		if (message?.["role"] !== "assistant") continue;
		if (type === "message_start") {
			blocks = [];
		} else if (type === "message_update") {
			const event = asObject(record["assistantMessageEvent"]);
			const kind = String(event?.["type"]);
			const contentIndex = event?.["contentIndex"];
			if (typeof contentIndex === "number") {
				if (kind.endsWith("_start")) blocks[contentIndex] = { text: "", ended: false };
				const block = blocks[contentIndex];
				const delta = event?.["delta"];
				if (block && kind.endsWith("_delta") && typeof delta === "string") block.text += delta;
				if (block && kind.endsWith("_end")) block.ended = true;
			}
		} else {
			continue;
		}
		const why = aheadOf(message, blocks);
		if (why !== undefined) return `record ${position} (${String(type)}${type === "message_update" ? `:${String(asObject(record["assistantMessageEvent"])?.["type"])}` : ""}): ${why}`;
	}
	return undefined;
}
