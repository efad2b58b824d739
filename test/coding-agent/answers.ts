/**
 * The model's scripted answers, as the Anthropic Messages API streams them (built with the
 * event builders of `test/providers/anthropic-server.ts`), paced so that pi's own output is
 * deterministic.
 */
import {
	encodeSse,
	errorBody,
	messageDelta,
	messageStart,
	messageStop,
	ping,
	type ScriptedResponse,
	type SseEvent,
	type SseResponse,
	textBlock,
	toolUseBlock,
} from "../providers/anthropic-server.js";

/**
 * Pause between SSE events. Each event then reaches the agent in its own macrotask, and pi's
 * listeners (which serialize the live, still-growing message objects later, from a promise
 * queue) see one event at a time: with back-to-back events, the JSON pi prints would depend
 * on how the socket happened to split the body. 30 ms was not always enough on a loaded
 * machine (a mutation run beside the suite): a stall of the agent's process longer than the
 * gap let two events arrive in one read, and a `text_start` record showed the whole text.
 */
export const EVENT_GAP_MS = 50;

/**
 * A streamed answer. It opens with a `ping` (the API may send one at any time) so the response
 * headers never share a packet with `message_start`: pi's `start` event carries the live
 * message, and whether its usage is already filled in when printed would depend on that.
 *
 * @example
 * sse([messageStart("msg_1"), ...textBlock(0, ["Hi"]), messageDelta("end_turn"), messageStop()]);
 */
export function sse(events: SseEvent[], ending: SseResponse["ending"] = "end"): SseResponse {
	return { kind: "sse", events: [ping(), ...events], chunkDelayMs: EVENT_GAP_MS, ending };
}

/**
 * A text answer, streamed in pieces.
 *
 * @example
 * textAnswer("msg_1", ["Hello ", "world."]);
 */
export function textAnswer(id: string, pieces: string[]): SseResponse {
	return sse([messageStart(id), ping(), ...textBlock(0, pieces), messageDelta("end_turn"), messageStop()]);
}

export interface ScriptedToolCall {
	id: string;
	name: string;
	input: Record<string, unknown>;
}

/**
 * A short text, then tool calls (each one's JSON input in two fragments), stop reason tool_use.
 *
 * @example
 * toolAnswer("msg_1", "Reading.", [{ id: "toolu_1", name: "read", input: { path: "a.txt" } }]);
 */
export function toolAnswer(id: string, preface: string, calls: ScriptedToolCall[]): ScriptedResponse {
	const blocks = calls.flatMap((call, i) => {
		const json = JSON.stringify(call.input);
		const cut = Math.floor(json.length / 2);
		return toolUseBlock(i + 1, call.id, call.name, [json.slice(0, cut), json.slice(cut)]);
	});
	return sse([
		messageStart(id),
		ping(),
		...textBlock(0, [preface]),
		...blocks,
		messageDelta("tool_use", { output_tokens: 40 }),
		messageStop(),
	]);
}

/**
 * Several SSE events written to the socket at once. The server writes one scripted event per
 * write; this one's text is all of them (the first event's `data` carries the rest).
 *
 * @example
 * sse([burst([messageStart("m"), ...textBlock(0, ["a", "b"]), messageDelta("end_turn"), messageStop()])]);
 */
export function burst(events: SseEvent[]): SseEvent {
	const [first] = events;
	if (!first) throw new Error("burst: no events");
	const head = `event: ${first.event}\ndata: `;
	return { event: first.event, data: encodeSse(events).slice(head.length, -2) };
}

/** The 400 Anthropic sends when the prompt exceeds the context window. */
export const PROMPT_TOO_LONG: ScriptedResponse = {
	kind: "error",
	status: 400,
	body: errorBody("invalid_request_error", "prompt is too long: 213462 tokens > 200000 maximum"),
};

/**
 * A shell command that waits (at most ~6 s) for `file` to appear in the working directory: a
 * tool that stays running exactly as long as the test wants, and never outlives it for long
 * (pi's bash tool starts its shell in a process group of its own).
 *
 * @example
 * toolAnswer("m", "Waiting.", [{ id: "t", name: "bash", input: { command: waitForFileCommand("go") } }]);
 */
export function waitForFileCommand(file: string): string {
	return `for i in $(seq 1 120); do [ -f ${file} ] && break; sleep 0.05; done; echo waited`;
}
