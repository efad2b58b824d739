/**
 * What a provider does with wire data of the wrong shape. The three built-in providers read a
 * server's stream as JSON they did not write: a proxy, a gateway or an "OpenAI-compatible"
 * server may drop a field, send null or a number where an object belongs, repeat, reorder or
 * leave out an event, or stop mid-reply. A reader that trusts the shape then goes into what is
 * not there and the reply ends with a bare JavaScript error ("Cannot read properties of
 * undefined (reading 'type')", "x is not a function", "undefined is not iterable") that names
 * neither the event nor the field, or the error escapes the provider's `try` (a rejection
 * nobody handles, a throw, a stream that never ends and a `result()` that never settles). Three
 * such readings were fixed in streamAnthropic (each event is now checked before it is read,
 * src/providers/anthropic-events.ts); example tests pin those three, not the next field a
 * reader goes into unchecked. So this property starts from a valid streamed reply of each
 * provider's wire format (text, a tool call whose JSON arguments are split over deltas, usage,
 * the end event; or thinking; or an error sent mid-stream), lets fast-check apply one to three
 * mutations to the parsed events (drop or retype a field or add one, drop, duplicate, swap or
 * replace an event by null or a number, send it under another SSE name, cut the stream),
 * serves it byte for byte from a local server and calls the real provider. Whatever came,
 * `result()` settles within seconds, nothing throws or rejects unhandled, the stream ends with
 * exactly one `done` or `error`, and the message is a well-formed reply or an error whose
 * `errorMessage` is readable: never a bare runtime error, nor a field shown as "[object Object]"
 * (which found an error event whose `error.type` was an object read as "[object Object]:
 * Overloaded", seed 101 after some 500 runs). Reverting the Anthropic fix makes it fail within
 * a few dozen runs. And a call of a reply that ended well has the arguments the JSON of its
 * fragments spells: with a call's end event left out, Anthropic and the proxy ran a call of over
 * 2 KB with its streaming preview, cut short (a probe found it; the "long tool call" replies).
 * A reply the output limit cut off announces no call's end whose arguments were cut: the
 * providers announced it, and a streaming tool ran the call with what was read of the cut text
 * (the "call cut off by the output limit" replies).
 *
 * `PROPERTY_RUNS` (default 100 per provider) sets the runs, `PROPERTY_SEED` replays a seed.
 */
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { streamAnthropic } from "../../src/providers/anthropic.js";
import { loadAnthropicSdk } from "../../src/providers/anthropic-sdk.js";
import type { AssistantMessageEventStream } from "../../src/providers/event-stream.js";
import { getModel } from "../../src/providers/models.js";
import { loadOpenAISdk } from "../../src/providers/openai-client.js";
import { streamOpenAICompletions } from "../../src/providers/openai-completions.js";
import { createOpenAICompatibleModel } from "../../src/providers/openai-models.js";
import { streamProxy } from "../../src/providers/proxy.js";
import type { AssistantMessage } from "../../src/types/messages.js";
import type { Context } from "../../src/types/model.js";
import type { AssistantMessageEvent } from "../../src/types/stream.js";
import * as anthropic from "./anthropic-server.js";
import * as openai from "./openai-server.js";
import { type ProviderServers, useProviderServers } from "./provider-servers.js";
import * as proxy from "./proxy-server.js";

const PROPERTY_RUNS = Number(process.env["PROPERTY_RUNS"] ?? 100);
const PROPERTY_SEED = Number(process.env["PROPERTY_SEED"] ?? Date.now() % 2 ** 31);
/** The longest a reply may take to settle: every served stream ends, so only a reader that lost its way waits. */
const SETTLE_MS = 5_000;
/** Each property's own time limit: a run takes tens of milliseconds, one that hangs SETTLE_MS. */
const PROPERTY_TIMEOUT_MS = Math.max(90_000, PROPERTY_RUNS * 1_000);

/** What JavaScript says when code reads what is not there: the reader met the wrong shape unchecked. */
const BARE_RUNTIME_ERROR =
	/Cannot read prop|Cannot set prop|is not a function|is not iterable|undefined is not|null is not|Cannot convert undefined|Cannot convert null|Maximum call stack|\[object Object\]/;

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };
type Path = (string | number)[];

/** One event as it travels: its JSON payload, and (Anthropic) the SSE `event:` name it came under. */
interface WireEvent {
	name?: string;
	data: Json;
}

/** The OpenAI end marker, written as it is (`data: [DONE]`) rather than as JSON. */
const DONE_MARKER = "[DONE]";

function toJson(value: unknown): Json {
	return JSON.parse(JSON.stringify(value)) as Json;
}

function isObject(value: Json | undefined): value is JsonObject {
	return value !== null && typeof value === "object" && !Array.isArray(value);
}

// ---------------------------------------------------------------------------------------
// The valid replies each mutation starts from, per provider.

/**
 * A tool call's arguments over 2 KB, in fragments placed so that the streaming preview was last
 * read a fragment before the end (it is read again once the text grew by an eighth): a reader that
 * keeps the preview where the whole text says otherwise runs the call with arguments cut short.
 */
const longArguments = JSON.stringify({ path: "notes.txt", content: "x".repeat(2_507) });
const longFragments = [longArguments.slice(0, 2_040), longArguments.slice(2_040, 2_340), longArguments.slice(2_340)];

type ProviderName = "anthropic" | "openai" | "proxy";

const anthropicBases: Record<string, WireEvent[]> = {
	"text and tool call": [
		anthropic.messageStart("msg_01", { input_tokens: 12, output_tokens: 1 }),
		anthropic.ping(),
		...anthropic.textBlock(0, ["Let me ", "look."]),
		...anthropic.toolUseBlock(1, "toolu_01", "read", ['{"pa', 'th":"a.', 'txt"}']),
		anthropic.messageDelta("tool_use", { output_tokens: 30 }),
		anthropic.messageStop(),
	].map((event) => ({ name: event.event, data: toJson(event.data) })),
	"thinking and text": [
		anthropic.messageStart("msg_02"),
		...anthropic.thinkingBlock(0, ["Think", "ing"], "sig_01"),
		...anthropic.textBlock(1, ["Hi"]),
		anthropic.messageDelta("end_turn"),
		anthropic.messageStop(),
	].map((event) => ({ name: event.event, data: toJson(event.data) })),
	"long tool call": [
		anthropic.messageStart("msg_04"),
		...anthropic.toolUseBlock(0, "toolu_04", "write", longFragments),
		anthropic.messageDelta("tool_use"),
		anthropic.messageStop(),
	].map((event) => ({ name: event.event, data: toJson(event.data) })),
	"call cut off by the output limit": [
		anthropic.messageStart("msg_05"),
		...anthropic.textBlock(0, ["Deleting."]),
		...anthropic.toolUseBlock(1, "toolu_05", "delete", ['{"path":"/tmp/imp', "ortant-dir/sub"]),
		anthropic.messageDelta("max_tokens"),
		anthropic.messageStop(),
	].map((event) => ({ name: event.event, data: toJson(event.data) })),
	"call cut off before its arguments": [anthropic.messageStart("msg_06"), ...anthropic.toolUseBlock(0, "toolu_06", "wipe", []), anthropic.messageDelta("max_tokens"), anthropic.messageStop()].map((event) => ({
		name: event.event,
		data: toJson(event.data),
	})),
	"error mid-stream": [
		anthropic.messageStart("msg_03"),
		anthropic.blockStart(0, { type: "text", text: "" }),
		anthropic.blockDelta(0, { type: "text_delta", text: "Par" }),
		anthropic.streamError("overloaded_error", "Overloaded"),
	].map((event) => ({ name: event.event, data: toJson(event.data) })),
};

const openaiUsage = openai.usageChunk({ prompt_tokens: 12, completion_tokens: 30, cached_tokens: 4 });
const openaiBases: Record<string, WireEvent[]> = {
	"text and tool call": [
		...[
			openai.roleChunk("chatcmpl-1"),
			...openai.textChunks(["Let me ", "look."]),
			...openai.toolCallChunks(0, "call_01", "read", ['{"pa', 'th":"a.', 'txt"}']),
			openai.finishChunk("tool_calls"),
			openaiUsage,
		].map((frame) => ({ data: toJson("data" in frame ? frame.data : null) })),
		{ data: DONE_MARKER },
	],
	"reasoning and text": [
		...[...openai.reasoningChunks(["Think", "ing"]), ...openai.textChunks(["Hi"]), openai.finishChunk("stop"), openaiUsage].map((frame) => ({
			data: toJson("data" in frame ? frame.data : null),
		})),
		{ data: DONE_MARKER },
	],
	"call cut off by the output limit": [
		...[openai.roleChunk("chatcmpl-5"), ...openai.textChunks(["Deleting."]), ...openai.toolCallChunks(0, "call_05", "delete", ['{"path":"/tmp/imp', "ortant-dir/sub"]), openai.finishChunk("length"), openaiUsage].map((frame) => ({
			data: toJson("data" in frame ? frame.data : null),
		})),
		{ data: DONE_MARKER },
	],
	"call cut off before its arguments": [
		...[openai.roleChunk("chatcmpl-6"), ...openai.toolCallChunks(0, "call_06", "wipe", []), openai.finishChunk("length"), openaiUsage].map((frame) => ({ data: toJson("data" in frame ? frame.data : null) })),
		{ data: DONE_MARKER },
	],
	"error mid-stream": [
		...[openai.roleChunk("chatcmpl-3"), ...openai.textChunks(["Par"])].map((frame) => ({ data: toJson("data" in frame ? frame.data : null) })),
		{ data: toJson(openai.errorBody("Overloaded", "server_error", "overloaded")) },
	],
};

const proxyBases: Record<string, WireEvent[]> = {
	"text and tool call": [
		{ type: "start" },
		...proxy.textBlock(0, ["Let me ", "look."]),
		...proxy.toolCallBlock(1, "toolu_01", "read", ['{"pa', 'th":"a.', 'txt"}']),
		{ type: "done", reason: "toolUse", usage: proxy.usage(12, 30) },
	].map((event) => ({ data: toJson(event) })),
	"thinking and text": [
		{ type: "start" },
		...proxy.thinkingBlock(0, ["Think", "ing"], "sig_01"),
		...proxy.textBlock(1, ["Hi"], "text_sig"),
		{ type: "done", reason: "stop", usage: proxy.usage(12, 3) },
	].map((event) => ({ data: toJson(event) })),
	"long tool call": [{ type: "start" }, ...proxy.toolCallBlock(0, "toolu_04", "write", longFragments), { type: "done", reason: "toolUse", usage: proxy.usage(12, 900) }].map((event) => ({
		data: toJson(event),
	})),
	"error mid-stream": [
		{ type: "start" },
		{ type: "text_start", contentIndex: 0 },
		{ type: "text_delta", contentIndex: 0, delta: "Par" },
		{ type: "error", reason: "error", errorMessage: "Overloaded", usage: proxy.usage(12, 1) },
	].map((event) => ({ data: toJson(event) })),
};

/**
 * The SSE `event:` names a provider's reader looks at: Anthropic's SDK reads `ping` and `error`
 * by name (and every name of the protocol may be sent over another); the OpenAI reader takes an
 * `error` event as an error; the proxy reads only `data:` lines.
 */
const eventNamesOf: Record<ProviderName, string[]> = {
	anthropic: ["message_start", "content_block_start", "content_block_delta", "content_block_stop", "message_delta", "message_stop", "ping", "error", "completion"],
	openai: ["error", "message"],
	proxy: [],
};

const basesOf: Record<ProviderName, Record<string, WireEvent[]>> = { anthropic: anthropicBases, openai: openaiBases, proxy: proxyBases };

/** Every key and every string value of a provider's replies: retyping a field to another of the protocol's words reaches other branches of its reader. */
function vocabularyOf(bases: Record<string, WireEvent[]>): { keys: string[]; strings: string[] } {
	const keys = new Set<string>();
	const strings = new Set<string>(["", "x", "constructor", "toString"]);
	const walk = (value: Json): void => {
		if (typeof value === "string") strings.add(value);
		else if (Array.isArray(value)) value.forEach(walk);
		else if (isObject(value)) {
			for (const [key, inner] of Object.entries(value)) {
				keys.add(key);
				walk(inner);
			}
		}
	};
	for (const events of Object.values(bases)) for (const event of events) walk(event.data);
	strings.delete(DONE_MARKER);
	return { keys: [...keys].sort(), strings: [...strings].sort() };
}

// ---------------------------------------------------------------------------------------
// Mutations: indices are taken modulo what is there when each applies, so any list shrinks.

type Mutation =
	| { op: "dropField"; event: number; field: number }
	/** Sets an existing field, or adds one of the protocol's keys to an object, to `value`. */
	| { op: "setField"; event: number; field: number; value: Json }
	| { op: "dropEvent"; event: number }
	| { op: "duplicateEvent"; event: number }
	| { op: "swapEvents"; event: number; other: number }
	| { op: "replaceEvent"; event: number; value: null | number }
	/** Sends the event under another SSE `event:` name (the SDKs read some names themselves: `error`, `ping`). */
	| { op: "renameEvent"; event: number; name: string }
	/** Ends the body after `event` events (modulo their count plus one): closed, or the connection reset. */
	| { op: "cutAfter"; event: number; reset: boolean };

function mutationArbitrary(vocabulary: { keys: string[]; strings: string[] }, eventNames: readonly string[]): fc.Arbitrary<Mutation> {
	const index = fc.nat({ max: 63 });
	const value: fc.Arbitrary<Json> = fc.oneof(
		fc.constant(null),
		fc.boolean(),
		fc.constantFrom(0, 1, -1, 2, 1.5, 1e300),
		fc.integer({ min: -3, max: 40 }),
		fc.constantFrom(...vocabulary.strings),
		fc.constantFrom<Json>([], [null], [1], ["x"], [{}]),
		fc.constantFrom<Json>({}, { type: null }, { x: 1 }),
		fc.constantFrom(...vocabulary.strings).map((type): Json => ({ type })),
	);
	const weighted = (weight: number, arbitrary: fc.Arbitrary<Mutation>) => ({ weight, arbitrary });
	const renames = eventNames.length === 0 ? [] : [weighted(1, fc.record({ op: fc.constant("renameEvent" as const), event: index, name: fc.constantFrom(...eventNames) }))];
	return fc.oneof(
		weighted(3, fc.record({ op: fc.constant("dropField" as const), event: index, field: index })),
		weighted(5, fc.record({ op: fc.constant("setField" as const), event: index, field: index, value })),
		weighted(1, fc.record({ op: fc.constant("dropEvent" as const), event: index })),
		weighted(1, fc.record({ op: fc.constant("duplicateEvent" as const), event: index })),
		weighted(1, fc.record({ op: fc.constant("swapEvents" as const), event: index, other: index })),
		weighted(1, fc.record({ op: fc.constant("replaceEvent" as const), event: index, value: fc.constantFrom<null | number>(null, 0, 7) })),
		weighted(1, fc.record({ op: fc.constant("cutAfter" as const), event: index, reset: fc.boolean() })),
		...renames,
	);
}

/** Every position inside `value` (not `value` itself), parents before children. */
function fieldPaths(value: Json, prefix: Path = []): Path[] {
	const children: [string | number, Json][] = Array.isArray(value) ? value.map((inner, position) => [position, inner]) : isObject(value) ? Object.entries(value) : [];
	return children.flatMap(([key, inner]) => [[...prefix, key], ...fieldPaths(inner, [...prefix, key])]);
}

/** Every object inside `value`, `value` included. */
function objectPaths(value: Json, prefix: Path = []): Path[] {
	const own = isObject(value) ? [prefix] : [];
	const children: [string | number, Json][] = Array.isArray(value) ? value.map((inner, position) => [position, inner]) : isObject(value) ? Object.entries(value) : [];
	return [...own, ...children.flatMap(([key, inner]) => objectPaths(inner, [...prefix, key]))];
}

function at(value: Json, path: Path): Json | undefined {
	let current: Json | undefined = value;
	for (const key of path) {
		if (Array.isArray(current) && typeof key === "number") current = current[key];
		else if (isObject(current) && typeof key === "string") current = current[key];
		else return undefined;
	}
	return current;
}

/** Where setField may write in `data`: each field there, and each of the protocol's keys an object lacks. */
function settableFields(data: Json, keys: readonly string[]): Path[] {
	const added = objectPaths(data).flatMap((path) => {
		const object = at(data, path);
		return isObject(object) ? keys.filter((key) => !Object.hasOwn(object, key)).map((key) => [...path, key]) : [];
	});
	return [...fieldPaths(data), ...added];
}

function removeAt(data: Json, path: Path): void {
	const parent = at(data, path.slice(0, -1));
	const key = path.at(-1);
	if (Array.isArray(parent) && typeof key === "number") parent.splice(key, 1);
	else if (isObject(parent) && typeof key === "string") delete parent[key];
}

function setAt(data: Json, path: Path, value: Json): void {
	const parent = at(data, path.slice(0, -1));
	const key = path.at(-1);
	if (Array.isArray(parent) && typeof key === "number") parent[key] = value;
	else if (isObject(parent) && typeof key === "string") parent[key] = value;
}

/** The served reply: the base's events with the mutations applied in order, and how the body ends. */
function mutate(base: readonly WireEvent[], mutations: readonly Mutation[], keys: readonly string[]): { events: WireEvent[]; reset: boolean } {
	const events: WireEvent[] = base.map((event) => ({ ...event, data: structuredClone(event.data) }));
	let reset = false;
	for (const mutation of mutations) {
		if (events.length === 0) break;
		const position = mutation.event % events.length;
		const target = events[position] as WireEvent;
		switch (mutation.op) {
			case "dropField": {
				const paths = fieldPaths(target.data);
				if (paths.length > 0) removeAt(target.data, paths[mutation.field % paths.length] as Path);
				break;
			}
			case "setField": {
				const paths = settableFields(target.data, keys);
				if (paths.length > 0) setAt(target.data, paths[mutation.field % paths.length] as Path, structuredClone(mutation.value));
				break;
			}
			case "dropEvent":
				events.splice(position, 1);
				break;
			case "duplicateEvent":
				events.splice(position, 0, { ...target, data: structuredClone(target.data) });
				break;
			case "swapEvents": {
				const other = mutation.other % events.length;
				events[position] = events[other] as WireEvent;
				events[other] = target;
				break;
			}
			case "replaceEvent":
				events[position] = { ...target, data: mutation.value };
				break;
			case "renameEvent":
				events[position] = { ...target, name: mutation.name };
				break;
			case "cutAfter":
				events.length = mutation.event % (events.length + 1);
				reset = mutation.reset;
				break;
		}
	}
	return { events, reset };
}

// ---------------------------------------------------------------------------------------
// Serving a reply and calling the provider.

const context: Context = { systemPrompt: "s", messages: [{ role: "user", content: "Read a.txt", timestamp: 1 }] };

/** Queues `events` as the server's next answer and returns the body as it goes on the wire (for the failure message). */
function serve(provider: ProviderName, servers: ProviderServers, events: readonly WireEvent[], reset: boolean): string {
	const ending = reset ? "reset" : "end";
	const payload = (event: WireEvent) => (event.data === DONE_MARKER ? DONE_MARKER : JSON.stringify(event.data));
	if (provider === "anthropic") {
		const sse = events.map((event): anthropic.SseEvent => ({ event: event.name ?? "message", data: payload(event) }));
		servers.anthropic.reset();
		servers.anthropic.respond({ kind: "sse", events: sse, ending, chunkDelayMs: 0 });
		return anthropic.encodeSse(sse);
	}
	if (provider === "openai") {
		const frames = events.map((event): openai.SseFrame => ({ data: payload(event), ...(event.name === undefined ? {} : { event: event.name }) }));
		servers.openai.reset();
		servers.openai.respond({ kind: "sse", frames, ending, chunkDelayMs: 0 });
		return openai.encodeSse(frames);
	}
	const frames = events.map((event): proxy.ProxyFrame => ({ raw: `data: ${payload(event)}\n\n` }));
	servers.proxy.reset();
	servers.proxy.respond({ kind: "stream", frames, ending, chunkDelayMs: 0 });
	return proxy.encodeFrames(frames);
}

function callProvider(provider: ProviderName, servers: ProviderServers): AssistantMessageEventStream {
	if (provider === "anthropic") {
		return streamAnthropic({ ...getModel("anthropic", "claude-haiku-4-5"), baseUrl: servers.anthropic.baseUrl }, context, { apiKey: "test-key", maxRetries: 0 });
	}
	if (provider === "openai") {
		return streamOpenAICompletions(createOpenAICompatibleModel({ baseUrl: servers.openai.baseUrl, id: openai.testModelId }), context, { apiKey: "test-key", maxRetries: 0 });
	}
	return streamProxy(getModel("anthropic", "claude-haiku-4-5"), context, { proxyUrl: servers.proxy.url, authToken: "tok" });
}

type Outcome =
	| { kind: "threw"; error: unknown }
	| { kind: "late"; events: AssistantMessageEvent[] }
	| { kind: "iteration failed"; error: unknown; events: AssistantMessageEvent[] }
	| { kind: "settled"; events: AssistantMessageEvent[]; result: AssistantMessage };

/** Reads the stream to its end and its result, for at most SETTLE_MS. */
async function callAndRead(provider: ProviderName, servers: ProviderServers): Promise<Outcome> {
	let stream: AssistantMessageEventStream;
	try {
		stream = callProvider(provider, servers);
	} catch (error) {
		return { kind: "threw", error };
	}
	const events: AssistantMessageEvent[] = [];
	const reading = (async (): Promise<Outcome> => {
		try {
			for await (const event of stream) events.push(event);
		} catch (error) {
			return { kind: "iteration failed", error, events };
		}
		return { kind: "settled", events, result: await stream.result() };
	})();
	let timer: ReturnType<typeof setTimeout> | undefined;
	const late = new Promise<Outcome>((resolve) => {
		timer = setTimeout(resolve, SETTLE_MS, { kind: "late", events });
	});
	try {
		return await Promise.race([reading, late]);
	} finally {
		clearTimeout(timer);
	}
}

function shown(value: unknown): string {
	if (value instanceof Error) return `${value.name}: ${value.message}`;
	return typeof value === "string" ? value : (JSON.stringify(value) ?? String(value));
}

function traceOf(events: readonly AssistantMessageEvent[]): string {
	return events.map((event) => (event.type === "error" ? `error(${event.error.errorMessage})` : event.type === "done" ? `done(${event.reason})` : event.type)).join(" ");
}

function nonNegative(value: unknown): boolean {
	return typeof value === "number" && Number.isFinite(value) && value >= 0;
}

/** What is wrong with the message a reply ended with. */
function messageProblems(message: AssistantMessage): string[] {
	const problems: string[] = [];
	const failed = message.stopReason === "error" || message.stopReason === "aborted";
	if (failed) {
		const text = message.errorMessage;
		if (typeof text !== "string" || text.trim() === "") problems.push(`an error reply without an errorMessage (${shown(text)})`);
		else if (BARE_RUNTIME_ERROR.test(text)) problems.push(`an error reply whose errorMessage is a bare runtime error: ${text}`);
	} else if (message.stopReason === "stop" || message.stopReason === "length" || message.stopReason === "toolUse") {
		if (message.errorMessage !== undefined) problems.push(`a ${message.stopReason} reply carries errorMessage ${shown(message.errorMessage)}`);
	} else {
		problems.push(`stopReason ${shown(message.stopReason)}`);
	}
	if (!Array.isArray(message.content)) return [...problems, `content is ${shown(message.content)}`];
	message.content.forEach((part, index) => {
		const where = `content[${index}]`;
		if (part.type === "text") {
			if (typeof part.text !== "string") problems.push(`${where}.text is ${shown(part.text)}`);
		} else if (part.type === "thinking") {
			if (typeof part.thinking !== "string") problems.push(`${where}.thinking is ${shown(part.thinking)}`);
			if (part.thinkingSignature !== undefined && typeof part.thinkingSignature !== "string") problems.push(`${where}.thinkingSignature is ${shown(part.thinkingSignature)}`);
		} else if (part.type === "toolCall") {
			if (typeof part.id !== "string" || part.id === "") problems.push(`${where}.id is ${shown(part.id)}`);
			if (typeof part.name !== "string" || (!failed && part.name === "")) problems.push(`${where}.name is ${shown(part.name)}`);
			const args: unknown = part.arguments;
			if (args === null || typeof args !== "object" || Array.isArray(args)) problems.push(`${where}.arguments is ${shown(args)}`);
		} else {
			problems.push(`${where} is ${shown(part)}`);
		}
	});
	const { usage } = message;
	for (const field of ["input", "output", "cacheRead", "cacheWrite", "totalTokens"] as const) {
		if (!nonNegative(usage[field])) problems.push(`usage.${field} is ${shown(usage[field])}`);
	}
	for (const field of ["input", "output", "cacheRead", "cacheWrite", "total"] as const) {
		if (!nonNegative(usage.cost[field])) problems.push(`usage.cost.${field} is ${shown(usage.cost[field])}`);
	}
	return problems;
}

/**
 * A call of a reply that ended well whose arguments are not what the JSON its fragments spell
 * says, when they spell an object: the call would run with other arguments than the model's.
 * The fragments are those up to the call's end, when it has one: there the call is final (a
 * fragment after it, once, replaced the arguments of the proxy's call with its own reading).
 */
function argumentProblems(events: readonly AssistantMessageEvent[], message: AssistantMessage): string[] {
	if (message.stopReason !== "toolUse" && message.stopReason !== "stop") return [];
	const problems: string[] = [];
	message.content.forEach((part, index) => {
		if (part.type !== "toolCall") return;
		const end = events.findIndex((event) => event.type === "toolcall_end" && event.contentIndex === index);
		const fragments = end === -1 ? events : events.slice(0, end);
		const text = fragments.map((event) => (event.type === "toolcall_delta" && event.contentIndex === index ? event.delta : "")).join("");
		let spelt: unknown;
		try {
			spelt = JSON.parse(text);
		} catch {
			return;
		}
		if (spelt === null || typeof spelt !== "object" || Array.isArray(spelt)) return;
		if (JSON.stringify(part.arguments) !== JSON.stringify(spelt)) problems.push(`content[${index}].arguments are not the ${text.length} characters of JSON its fragments spell (${JSON.stringify(part.arguments).length} characters)`);
	});
	return problems;
}

/**
 * A reply the output limit cut off whose call's end was announced though the JSON its fragments
 * spell up to that end is not complete: the end says the arguments are final, and a streaming
 * tool starts on it, with arguments read from the cut text (a probe's delete of a path cut short).
 */
function cutOffProblems(events: readonly AssistantMessageEvent[], message: AssistantMessage): string[] {
	if (message.stopReason !== "length") return [];
	const problems: string[] = [];
	events.forEach((event, at) => {
		if (event.type !== "toolcall_end") return;
		const text = events
			.slice(0, at)
			.map((earlier) => (earlier.type === "toolcall_delta" && earlier.contentIndex === event.contentIndex ? earlier.delta : ""))
			.join("");
		try {
			JSON.parse(text);
		} catch {
			problems.push(`content[${event.contentIndex}]: toolcall_end announced a call whose ${text.length} characters of arguments the output limit cut off`);
		}
	});
	return problems;
}

/** What broke the providers' promise: never throw, always settle, one final event, a readable message. */
function outcomeProblems(outcome: Outcome): string[] {
	switch (outcome.kind) {
		case "threw":
			return [`the stream function threw: ${shown(outcome.error)}`];
		case "late":
			return [`result() did not settle within ${SETTLE_MS} ms; events so far: ${traceOf(outcome.events)}`];
		case "iteration failed":
			return [`iterating the stream threw: ${shown(outcome.error)}`];
		case "settled": {
			const problems: string[] = [];
			const terminal = outcome.events.filter((event) => event.type === "done" || event.type === "error");
			if (terminal.length !== 1) problems.push(`${terminal.length} done/error events`);
			const last = outcome.events.at(-1);
			if (last?.type !== "done" && last?.type !== "error") problems.push(`the stream ended with ${last?.type ?? "no event"}`);
			else if ((last.type === "done" ? last.message : last.error) !== outcome.result) problems.push("result() is not the message of the final event");
			return [...problems, ...messageProblems(outcome.result), ...argumentProblems(outcome.events, outcome.result), ...cutOffProblems(outcome.events, outcome.result)];
		}
	}
}

// ---------------------------------------------------------------------------------------

describe("a provider given wire data of the wrong shape", () => {
	const servers = useProviderServers();
	const unhandled: unknown[] = [];
	const onUnhandled = (reason: unknown) => {
		unhandled.push(reason);
	};

	beforeAll(async () => {
		console.log(`property seed (mutated wire): ${PROPERTY_SEED}  (PROPERTY_SEED=${PROPERTY_SEED} to replay)`);
		process.on("unhandledRejection", onUnhandled);
		// Loaded once before the runs: the first call would load them inside its SETTLE_MS.
		await loadAnthropicSdk();
		await loadOpenAISdk();
	});
	afterAll(() => {
		process.off("unhandledRejection", onUnhandled);
	});

	for (const provider of ["anthropic", "openai", "proxy"] as const) {
		const bases = basesOf[provider];
		const vocabulary = vocabularyOf(bases);
		const mutation = mutationArbitrary(vocabulary, eventNamesOf[provider]);

		it(
			`property (${provider}): whatever 1-3 mutations did to a valid reply, result() settles, nothing throws or rejects unhandled, one done or error ends the stream and an error says what in words`,
			async () => {
				await fc.assert(
					fc.asyncProperty(fc.constantFrom(...Object.keys(bases)), fc.array(mutation, { minLength: 1, maxLength: 3 }), async (baseName, mutations) => {
						const { events, reset } = mutate(bases[baseName] as WireEvent[], mutations, vocabulary.keys);
						const wire = serve(provider, servers, events, reset);
						const unhandledBefore = unhandled.length;
						const outcome = await callAndRead(provider, servers);
						// A rejection is reported once the microtasks ran out: give it a turn of the event loop.
						await new Promise((resolve) => setTimeout(resolve, 5));
						const problems = [
							...outcomeProblems(outcome),
							...unhandled.slice(unhandledBefore).map((reason) => `an unhandled rejection: ${shown(reason)}`),
						];
						const trace = outcome.kind === "threw" ? "" : traceOf(outcome.events);
						expect(problems, `served (${reset ? "then reset" : "then closed"}):\n${wire.slice(0, 3_000)}\nevents: ${trace}`).toEqual([]);
					}),
					{
						numRuns: PROPERTY_RUNS,
						seed: PROPERTY_SEED,
						// The long call's end event left out (its sixth): a probe found the call run with its preview.
						examples: "long tool call" in bases ? [["long tool call", [{ op: "dropEvent", event: 5 }]]] : [],
					},
				);
			},
			PROPERTY_TIMEOUT_MS,
		);
	}
});
