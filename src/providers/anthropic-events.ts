/**
 * The events of Anthropic's Messages stream, checked before the reader goes into them. The SDK
 * parses each event's JSON and hands it on as it is, so from a proxy or a compatible server an
 * event may be `null`, or lack the object the reader reads from (`message`, `content_block`,
 * `delta`); that surfaced as a bare TypeError ("Cannot read properties of undefined (reading
 * 'type')") that named neither the event nor the field.
 *
 * Only what the reader needs to go on is required here; the fields inside a message, block or
 * delta (text, ids, signatures) are checked where they are read, and a missing one is skipped.
 */
import { excerpt } from "./http-error-text.js";
import { asRecord } from "../util/json-values.js";

type Json = Record<string, unknown>;

/** A content block or a delta: an object with its `type`, the rest unchecked. */
export type TypedRecord = Json & { type: string };

/** A stream event the reader acts on, with the fields it goes into known to be there. */
export type AnthropicStreamEvent =
	| { type: "message_start"; message: Json }
	| { type: "content_block_start"; index: number; content_block: TypedRecord }
	| { type: "content_block_delta"; index: number; delta: TypedRecord }
	| { type: "content_block_stop"; index: number }
	| { type: "message_delta"; stopReason: string | undefined; usage: unknown }
	| { type: "message_stop" };

function asTypedRecord(value: unknown): TypedRecord | undefined {
	const record = asRecord(value);
	return typeof record?.["type"] === "string" ? (record as TypedRecord) : undefined;
}

/** The event as it came, shortened, so the message shows what was there instead. */
function shownEvent(value: unknown): string {
	return excerpt(JSON.stringify(value) ?? String(value), 160);
}

/**
 * The message of an event that is valid JSON but not the shape of its type.
 *
 * @example
 * malformedEventMessage(3, "content_block_delta", 'no "delta" object with a "type"', { type: "content_block_delta", index: 0 });
 * // 'Malformed event in Anthropic\'s stream (event 3, content_block_delta): no "delta" object with a "type": {"type":"content_block_delta","index":0}'
 */
export function malformedEventMessage(eventNumber: number, type: string, problem: string, event: unknown): string {
	return `Malformed event in Anthropic's stream (event ${eventNumber}, ${type}): ${problem}: ${shownEvent(event)}`;
}

/** The block index an event refers to: blocks are matched by it, so one without it cannot be placed. */
function blockIndex(record: Json): number | undefined {
	const index = record["index"];
	return Number.isSafeInteger(index) && (index as number) >= 0 ? (index as number) : undefined;
}

/**
 * Checks one parsed event of the stream. Returns the event when the reader acts on its type,
 * `undefined` for a type it does not know (the API adds event types; they are skipped), and
 * throws an error naming the event (its number and type) and what it lacks otherwise.
 * `previousType` is the type of the event before it, for an event that has no type of its own.
 *
 * @example
 * checkStreamEvent({ type: "message_stop" }, 9, "message_delta"); // { type: "message_stop" }
 * checkStreamEvent(null, 2, "message_start"); // throws "Malformed event in Anthropic's stream (event 2, after message_start): expected a JSON object with a \"type\", got null"
 */
export function checkStreamEvent(value: unknown, eventNumber: number, previousType: string): AnthropicStreamEvent | undefined {
	const record = asRecord(value);
	const type = record?.["type"];
	if (record === undefined || typeof type !== "string") {
		throw new Error(`Malformed event in Anthropic's stream (event ${eventNumber}, after ${previousType}): expected a JSON object with a "type", got ${shownEvent(value)}`);
	}
	const malformed = (problem: string) => new Error(malformedEventMessage(eventNumber, type, problem, value));
	const indexOf = () => {
		const index = blockIndex(record);
		if (index === undefined) throw malformed('no "index" (a whole number, at least 0)');
		return index;
	};
	switch (type) {
		case "message_start": {
			const message = asRecord(record["message"]);
			if (!message) throw malformed('no "message" object');
			return { type, message };
		}
		case "content_block_start": {
			const index = indexOf();
			const block = asTypedRecord(record["content_block"]);
			if (!block) throw malformed('no "content_block" object with a "type"');
			return { type, index, content_block: block };
		}
		case "content_block_delta": {
			const index = indexOf();
			const delta = asTypedRecord(record["delta"]);
			if (!delta) throw malformed('no "delta" object with a "type"');
			return { type, index, delta };
		}
		case "content_block_stop":
			return { type, index: indexOf() };
		case "message_delta": {
			const delta = asRecord(record["delta"]);
			if (!delta) throw malformed('no "delta" object');
			const stopReason = delta["stop_reason"];
			// null is the API's "not known yet"; anything else but text would read as a stop reason "[object Object]".
			if (stopReason !== undefined && stopReason !== null && typeof stopReason !== "string") {
				throw malformed('"delta.stop_reason" is neither a string nor null');
			}
			return { type, stopReason: stopReason || undefined, usage: record["usage"] };
		}
		case "message_stop":
			return { type };
		default:
			return undefined;
	}
}
