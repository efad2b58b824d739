/**
 * Checks of what callers hand the Agent, at the API boundary: a message that is not a message
 * would otherwise enter the transcript and break every later request (`Cannot read properties
 * of null (reading 'role')` on each call, for good). Each check throws a `TypeError` that names
 * the argument and says what was expected; nothing has been queued or recorded by then.
 */
import type { ImageContent } from "./types/content.js";
import type { AgentMessage } from "./types/messages.js";
import { describeError } from "./util/describe-error.js";

/**
 * A value as an error message shows what it got instead of what it expected: short, readable.
 *
 * @example
 * shown("x"); // '"x"'
 */
export function shown(value: unknown): string {
	if (value === undefined) return "undefined";
	if (typeof value === "string") return JSON.stringify(value.length > 60 ? `${value.slice(0, 60)}…` : value);
	return describeError(value).slice(0, 120);
}

function assertImage(value: unknown, argument: string): asserts value is ImageContent {
	const image = value as Partial<ImageContent> | null;
	if (typeof value !== "object" || image === null || image.type !== "image") {
		throw new TypeError(`${argument}: expected an image block { type: "image", data, mimeType }, got ${shown(value)}`);
	}
	if (typeof image.data !== "string" || image.data === "") throw new TypeError(`${argument}.data: expected base64 image data (a non-empty string)`);
	if (typeof image.mimeType !== "string" || !/^image\/[\w.+-]+$/.test(image.mimeType)) {
		throw new TypeError(`${argument}.mimeType: expected an image MIME type such as "image/png", got ${shown(image.mimeType)}`);
	}
}

function assertUserContent(content: unknown, argument: string): void {
	if (typeof content === "string") return;
	if (!Array.isArray(content)) throw new TypeError(`${argument}.content: expected a string or a list of text and image blocks, got ${shown(content)}`);
	content.forEach((block: unknown, index) => {
		const at = `${argument}.content[${index}]`;
		const typed = block as { type?: unknown; text?: unknown } | null;
		if (typeof block === "object" && typed !== null && typed.type === "text") {
			if (typeof typed.text !== "string") throw new TypeError(`${at}.text: expected a string, got ${shown(typed.text)}`);
			return;
		}
		assertImage(block, at);
	});
}

/**
 * Throws a `TypeError` unless `value` is a transcript entry: an object with a `role`; a user
 * message's content must be text or text and image blocks.
 *
 * @example
 * assertAgentMessage(null, "steer(message)"); // TypeError: steer(message): expected a message ...
 */
export function assertAgentMessage(value: unknown, argument: string): asserts value is AgentMessage {
	const message = value as { role?: unknown; content?: unknown } | null;
	if (typeof value !== "object" || message === null || Array.isArray(value)) {
		throw new TypeError(`${argument}: expected a message object such as { role: "user", content: "...", timestamp: Date.now() }, got ${shown(value)}`);
	}
	if (typeof message.role !== "string" || message.role === "") {
		throw new TypeError(`${argument}.role: expected a role ("user", "assistant", "toolResult" or a custom one), got ${shown(message.role)}`);
	}
	if (message.role === "user") assertUserContent(message.content, argument);
	// Every provider reads these as lists of blocks: without one, each later request of the session
	// failed ("Cannot read properties of undefined"), and the stored session could not be mended.
	else if (message.role === "assistant" || message.role === "toolResult") assertBlocks(message.content, `${argument}.content`);
	if (message.role === "toolResult" && typeof (value as { toolCallId?: unknown }).toolCallId !== "string") {
		throw new TypeError(`${argument}.toolCallId: expected the id of the tool call it answers, got ${shown((value as { toolCallId?: unknown }).toolCallId)}`);
	}
}

/** A list of content blocks, each an object with a `type` (what each block holds is the provider's to read). */
function assertBlocks(content: unknown, argument: string): void {
	if (!Array.isArray(content)) throw new TypeError(`${argument}: expected a list of content blocks such as [{ type: "text", text: "..." }], got ${shown(content)}`);
	content.forEach((block: unknown, index) => {
		if (typeof block !== "object" || block === null || typeof (block as { type?: unknown }).type !== "string") {
			throw new TypeError(`${argument}[${index}]: expected a content block with a type, got ${shown(block)}`);
		}
	});
}

/**
 * Throws a `TypeError` unless `value` is a list of transcript entries.
 *
 * @example
 * assertTranscript(saved, "state.messages");
 */
export function assertTranscript(value: unknown, argument: string): asserts value is AgentMessage[] {
	if (!Array.isArray(value)) throw new TypeError(`${argument}: expected a list of messages, got ${shown(value)}`);
	value.forEach((message: unknown, index) => assertAgentMessage(message, `${argument}[${index}]`));
}

/**
 * What `prompt()` was given, as messages: a string (plus optional images) becomes a user
 * message; a message or a list of messages is checked and taken as it is.
 *
 * @example
 * promptMessages("Describe this", [{ type: "image", data, mimeType: "image/png" }]);
 */
export function promptMessages(input: unknown, images: unknown): AgentMessage[] {
	// No images is no images, however it is said (pi takes null, and [] beside a message).
	const none = images === undefined || images === null || (Array.isArray(images) && images.length === 0);
	if (typeof input === "string") {
		if (!none && !Array.isArray(images)) throw new TypeError(`prompt(text, images): expected images to be a list of image blocks, got ${shown(images)}`);
		const list: unknown[] = none ? [] : (images as unknown[]);
		list.forEach((image, index) => assertImage(image, `prompt(text, images)[${index}]`));
		const content: ({ type: "text"; text: string } | ImageContent)[] = [{ type: "text", text: input }, ...(list as ImageContent[])];
		return [{ role: "user", content, timestamp: Date.now() }];
	}
	// pi drops them without a word; an image the caller meant the model to see is refused instead.
	if (!none) throw new TypeError("prompt(message, images): images go with a text prompt, prompt(text, images)");
	if (Array.isArray(input)) {
		input.forEach((message: unknown, index) => assertAgentMessage(message, `prompt(messages)[${index}]`));
		return input as AgentMessage[];
	}
	if (typeof input !== "object" || input === null) {
		throw new TypeError(`prompt(input): expected a text, a message or a list of messages, got ${shown(input)}`);
	}
	assertAgentMessage(input, "prompt(message)");
	return [input];
}

const STORE_METHODS = ["load", "saveSnapshot", "appendJournal"] as const;

/**
 * Throws a `TypeError` unless `options` can make an agent: an object (or nothing), `listeners` a
 * list (or nothing), and, with a `store`, a store (its three methods) and a `sessionId` that
 * names the session (a non-empty text; `storedSessionId`: the one a snapshot being restored
 * names, when the options give none).
 * A store without a session id used to make an agent that stored nothing, silently.
 *
 * @example
 * assertAgentOptions({ store: createMemoryStore() }, "new Agent"); // TypeError: new Agent(options).sessionId: ...
 */
export function assertAgentOptions(options: unknown, call: string, storedSessionId?: unknown): void {
	if (options === undefined) return;
	if (typeof options !== "object" || options === null || Array.isArray(options)) throw new TypeError(`${call}(options): expected an object of options, got ${shown(options)}`);
	const { store, sessionId = storedSessionId, listeners } = options as { store?: unknown; sessionId?: unknown; listeners?: unknown };
	// null is none (a listener list read from a config that has none); anything else must be a list.
	if (listeners != null && !Array.isArray(listeners)) throw new TypeError(`${call}(options).listeners: expected a list of listener functions, got ${shown(listeners)}`);
	if (store === undefined) return;
	const missing = typeof store === "object" && store !== null ? STORE_METHODS.filter((method) => typeof (store as Record<string, unknown>)[method] !== "function") : STORE_METHODS;
	if (missing.length > 0) throw new TypeError(`${call}(options).store: expected an AgentStore (createMemoryStore(), createFileStore(dir), or an object with ${STORE_METHODS.join(", ")}), got ${shown(store)} (no ${missing.join(", ")})`);
	if (typeof sessionId !== "string" || sessionId === "") throw new TypeError(`${call}(options).sessionId: a store keeps sessions by id: expected a non-empty text, got ${shown(sessionId)}`);
}

/**
 * The keys of `value` not among `known`, quoted and joined for an error message (`"args", "force"`),
 * or undefined when it has none: an option misspelt is refused where it would be ignored.
 *
 * @example
 * unknownKeys({ args: {} }, ["arguments"]); // '"args"'
 */
export function unknownKeys(value: object, known: readonly string[]): string | undefined {
	const unknown = Object.keys(value).filter((key) => !known.includes(key));
	return unknown.length === 0 ? undefined : unknown.map((key) => JSON.stringify(key)).join(", ");
}

/**
 * What is wrong with the detail of a decision on a call waiting for approval, or undefined when
 * nothing is: `approve`'s `options` hold only `arguments`, `reject`'s `reason` is a text. A
 * misspelt option (`{ args }`) is refused rather than ignored: taken as no option, it would run
 * the call with the model's arguments, the ones the person meant to change. (The id is checked
 * against the calls that wait, whose ids the error then lists.)
 *
 * @example
 * decisionProblem("approve", { args: { path: "/tmp" } }); // 'unknown option "args" (the only one is "arguments"); nothing was decided'
 */
export function decisionProblem(command: "approve" | "reject", detail: unknown): string | undefined {
	if (detail === undefined) return undefined;
	if (command === "reject") return typeof detail === "string" ? undefined : `the reason must be a text, got ${shown(detail)}`;
	if (typeof detail !== "object" || detail === null || Array.isArray(detail)) return `the options must be { arguments?: {...} }, got ${shown(detail)}`;
	const unknown = unknownKeys(detail, ["arguments"]);
	return unknown === undefined ? undefined : `unknown option ${unknown} (the only one is "arguments"); nothing was decided`;
}
