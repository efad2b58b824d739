/**
 * What `createScriptedModel` takes, checked when it is given: a reply written the wrong way
 * (`{ text: "hi" }`, `"hi"`, a block `{ type: "txt" }`) used to be played as an error reply
 * ("blocks is not iterable") or as a tool call with no name, so a test failed far from its
 * mistake, or passed on the wrong reply. An unknown stop reason, a negative delay or usage that
 * is not numbers were taken without a word. Each check throws a `TypeError` naming the reply (its
 * index in the script, `replies[2]`) and the field.
 */
import { shown, unknownKeys } from "../agent-input.js";
import type { StopReason } from "../types/content.js";
import { unwritableJson } from "../util/json-writable.js";
import type { ScriptedModelOptions, ScriptedReply } from "./scripted.js";
import { ownValue } from "../util/own-keys.js";
import { isRecord } from "../util/json-values.js";

const STOP_REASONS: readonly StopReason[] = ["stop", "length", "toolUse", "error", "aborted"];
const REPLY_FIELDS: readonly string[] = ["content", "stopReason", "errorMessage", "usage", "delayMs", "chunkSize"] satisfies (keyof ScriptedReply)[];
const USAGE_FIELDS: readonly string[] = ["input", "output", "cacheRead", "cacheWrite", "totalTokens"] satisfies (keyof NonNullable<ScriptedReply["usage"]>)[];
/** The options `createScriptedModel` takes (`createFaultyModel` takes them too). */
export const OPTION_FIELDS = ["chunkSize", "delayMs", "firstEventDelayMs", "model", "whenExhausted"] as const satisfies readonly (keyof ScriptedModelOptions)[];
const BLOCK_FIELDS: Readonly<Record<string, readonly string[]>> = {
	text: ["type", "text"],
	thinking: ["type", "thinking", "signature", "redacted"],
	toolCall: ["type", "name", "arguments", "id"],
};

function problem(where: string, why: string, got: unknown): TypeError {
	return new TypeError(`createScriptedModel: ${where} ${why}, got ${shown(got)}`);
}

/**
 * Throws a `TypeError` (from `caller`) naming the fields of `value` that `known` does not list:
 * a misspelt field (`stop_reason`, `delay`) would otherwise be ignored without a word.
 *
 * @example
 * refuseUnknownFields({ delay: 5 }, ["delayMs"], "options", "createScriptedModel"); // TypeError: createScriptedModel: options has unknown field "delay" (known: delayMs)
 */
export function refuseUnknownFields(value: Record<string, unknown>, known: readonly string[], where: string, caller = "createScriptedModel"): void {
	const unknown = unknownKeys(value, known);
	if (unknown !== undefined) throw new TypeError(`${caller}: ${where} has unknown field ${unknown} (known: ${known.join(", ")})`);
}

function checkDelay(value: unknown, where: string): void {
	if (value !== undefined && !(typeof value === "number" && Number.isFinite(value) && value >= 0)) throw problem(where, "must be a number of milliseconds, 0 or more", value);
}

function checkChunkSize(value: unknown, where: string): void {
	if (value !== undefined && !(Number.isInteger(value) && (value as number) >= 1)) throw problem(where, "must be a whole number of characters, at least 1", value);
}

function checkBlock(block: unknown, where: string): void {
	if (!isRecord(block)) throw problem(where, 'must be a block ({ type: "text" | "thinking" | "toolCall", ... })', block);
	const type = block["type"];
	const fields = typeof type === "string" ? ownValue(BLOCK_FIELDS, type) : undefined;
	if (!fields) throw problem(`${where}.type`, 'must be "text", "thinking" or "toolCall"', block["type"]);
	refuseUnknownFields(block, fields, where);
	if (block["type"] === "text") {
		if (typeof block["text"] !== "string") throw problem(`${where}.text`, "must be a string", block["text"]);
	} else if (block["type"] === "thinking") {
		if (typeof block["thinking"] !== "string") throw problem(`${where}.thinking`, "must be a string", block["thinking"]);
		if (block["signature"] !== undefined && typeof block["signature"] !== "string") throw problem(`${where}.signature`, "must be a string", block["signature"]);
		if (block["redacted"] !== undefined && typeof block["redacted"] !== "boolean") throw problem(`${where}.redacted`, "must be true or false", block["redacted"]);
	} else {
		if (typeof block["name"] !== "string" || block["name"] === "") throw problem(`${where}.name`, "must be the tool's name (a non-empty string)", block["name"]);
		if (!isRecord(block["arguments"])) throw problem(`${where}.arguments`, "must be an object of arguments", block["arguments"]);
		// The arguments stream as JSON, as a provider's do: what JSON cannot write no model could send.
		const unwritable = unwritableJson(block["arguments"], `${where}.arguments`);
		if (unwritable !== undefined) throw new TypeError(`createScriptedModel: ${unwritable}, which a model cannot send as JSON`);
		if (block["id"] !== undefined && (typeof block["id"] !== "string" || block["id"] === "")) throw problem(`${where}.id`, "must be a non-empty string (or left out, to be generated)", block["id"]);
	}
}

/**
 * Throws a `TypeError` naming the reply and the field for a reply the scripted model could not
 * play as written. `where` names it: "replies[2]", "the reply returned for call 3".
 *
 * @example
 * checkScriptedReply({ content: "Hello", stopReason: "stop" }, "replies[0]"); // fine
 * checkScriptedReply({ text: "Hello" }, "replies[0]"); // TypeError: createScriptedModel: replies[0] has unknown field "text" (known: content, ...)
 */
export function checkScriptedReply(reply: unknown, where: string): asserts reply is ScriptedReply {
	if (!isRecord(reply)) throw problem(where, "must be a reply ({ content, ... }) or a function that returns one", reply);
	refuseUnknownFields(reply, REPLY_FIELDS, where);
	const content = reply["content"];
	if (Array.isArray(content)) content.forEach((block, index) => checkBlock(block, `${where}.content[${index}]`));
	else if (typeof content !== "string") throw problem(`${where}.content`, "must be a string (one text block) or an array of blocks", content);
	const stopReason = reply["stopReason"];
	if (stopReason !== undefined && !STOP_REASONS.includes(stopReason as StopReason)) throw problem(`${where}.stopReason`, `must be one of ${STOP_REASONS.map((reason) => `"${reason}"`).join(", ")}`, stopReason);
	if (reply["errorMessage"] !== undefined && typeof reply["errorMessage"] !== "string") throw problem(`${where}.errorMessage`, "must be a string", reply["errorMessage"]);
	const usage = reply["usage"];
	if (usage !== undefined) {
		if (!isRecord(usage)) throw problem(`${where}.usage`, "must be an object of token counts", usage);
		refuseUnknownFields(usage, USAGE_FIELDS, `${where}.usage`);
		for (const [name, count] of Object.entries(usage)) {
			if (count !== undefined && !(Number.isInteger(count) && (count as number) >= 0)) throw problem(`${where}.usage.${name}`, "must be a whole number of tokens, 0 or more", count);
		}
	}
	checkDelay(reply["delayMs"], `${where}.delayMs`);
	checkChunkSize(reply["chunkSize"], `${where}.chunkSize`);
}

/**
 * Throws a `TypeError` for a script entry that is neither a reply nor a function.
 *
 * @example
 * checkScriptEntries([{ content: "Hi" }, () => ({ content: "Bye" })], 0); // fine
 * checkScriptEntries(["Hi"], 0); // TypeError: createScriptedModel: replies[0] must be a reply ({ content, ... }) or a function that returns one, got "Hi"
 */
export function checkScriptEntries(entries: readonly unknown[], firstIndex: number): void {
	entries.forEach((entry, index) => {
		if (typeof entry !== "function") checkScriptedReply(entry, `replies[${firstIndex + index}]`);
	});
}

/**
 * Throws a `TypeError` naming the option for options the scripted model could not work with.
 *
 * @example
 * checkScriptedOptions({ chunkSize: 4, delayMs: 5 }); // fine
 * checkScriptedOptions({ delay: 5 }); // TypeError: createScriptedModel: options has unknown field "delay" (known: chunkSize, ...)
 */
export function checkScriptedOptions(options: unknown): asserts options is ScriptedModelOptions {
	if (!isRecord(options)) throw problem("options", "must be an object of options", options);
	refuseUnknownFields(options, OPTION_FIELDS, "options");
	checkChunkSize(options["chunkSize"], "options.chunkSize");
	checkDelay(options["delayMs"], "options.delayMs");
	checkDelay(options["firstEventDelayMs"], "options.firstEventDelayMs");
	if (options["model"] !== undefined && !isRecord(options["model"])) throw problem("options.model", "must be an object of model fields", options["model"]);
	const exhausted = options["whenExhausted"];
	// A reply, not a function: it answers every call after the script's last.
	if (typeof exhausted === "function") throw problem("options.whenExhausted", "must be a reply ({ content, ... }), not a function (a function in the replies list is called for its call)", exhausted);
	if (exhausted !== undefined) checkScriptedReply(exhausted, "options.whenExhausted");
}
