/**
 * The scripted and faulty models check what they are given. A reply written the wrong way used
 * to play as an error reply ("blocks is not iterable") or as a nameless tool call, and a fault of
 * unknown kind ended its reply with neither `done` nor `error`: the test failed far from its
 * mistake, or passed on the wrong reply.
 */
import { describe, expect, it } from "vitest";
import { Agent } from "../../src/agent.js";
import { createScriptedModel, type ScriptedReply } from "../../src/providers/scripted.js";
import { createFaultyModel, type FaultyModelOptions } from "../../src/testing/faulty-model.js";
import type { AssistantMessage } from "../../src/types/messages.js";

/** What a caller hands in without the type-checker (plain JavaScript, JSON, a cast). */
const loose = <T>(value: unknown): T => value as T;

async function lastReplyOf(model: ReturnType<typeof createScriptedModel>): Promise<AssistantMessage | undefined> {
	const agent = new Agent({ initialState: { model: model.model }, streamFn: model.streamFn });
	await agent.prompt("Hi");
	return agent.state.messages.filter((message): message is AssistantMessage => message.role === "assistant").at(-1);
}

describe("createScriptedModel refuses a script it could not play as written", () => {
	const cases: [string, unknown, RegExp][] = [
		["a reply with text instead of content", [{ text: "hello" }], /replies\[0\] has unknown field "text"/],
		["a reply with a number as content", [{ content: 5 }], /replies\[0\]\.content must be a string \(one text block\) or an array of blocks, got 5/],
		["a bare string", ["hello"], /replies\[0\] must be a reply \(\{ content, \.\.\. \}\) or a function that returns one, got "hello"/],
		["a block of unknown type", [{ content: [{ type: "txt", text: "x" }] }], /replies\[0\]\.content\[0\]\.type must be "text", "thinking" or "toolCall", got "txt"/],
		// A name every object has: the table of block fields answered with Object's, and the check failed deep inside.
		["a block of type constructor", [{ content: [{ type: "constructor", text: "x" }] }], /replies\[0\]\.content\[0\]\.type must be "text", "thinking" or "toolCall", got "constructor"/],
		["a text block without text", [{ content: [{ type: "text" }] }], /replies\[0\]\.content\[0\]\.text must be a string, got undefined/],
		["a tool call without a name", [{ content: "ok" }, { content: [{ type: "toolCall", arguments: {} }] }], /replies\[1\]\.content\[0\]\.name must be the tool's name/],
		["a tool call whose arguments are an array", [{ content: [{ type: "toolCall", name: "t", arguments: [1] }] }], /replies\[0\]\.content\[0\]\.arguments must be an object of arguments/],
		["a tool call with a BigInt argument", [{ content: [{ type: "toolCall", name: "t", arguments: { n: 1n } }] }], /replies\[0\]\.content\[0\]\.arguments\.n is a BigInt/],
		["an unknown stop reason", [{ content: "x", stopReason: "bogus" }], /replies\[0\]\.stopReason must be one of "stop", "length", "toolUse", "error", "aborted", got "bogus"/],
		["a negative delay", [{ content: "x", delayMs: -5 }], /replies\[0\]\.delayMs must be a number of milliseconds, 0 or more, got -5/],
		["a chunk size of 0", [{ content: "x", chunkSize: 0 }], /replies\[0\]\.chunkSize must be a whole number of characters, at least 1, got 0/],
		["usage that is not counts", [{ content: "x", usage: "x" }], /replies\[0\]\.usage must be an object of token counts, got "x"/],
		["a usage count that is not a number", [{ content: "x", usage: { input: "9" } }], /replies\[0\]\.usage\.input must be a whole number of tokens/],
		["a misspelt usage field", [{ content: "x", usage: { inputTokens: 9 } }], /replies\[0\]\.usage has unknown field "inputTokens"/],
		["null as the script", null, /replies must be an array of replies and reply functions, got null/],
	];
	for (const [name, script, message] of cases) {
		it(name, () => {
			expect(() => createScriptedModel(loose(script))).toThrow(TypeError);
			expect(() => createScriptedModel(loose(script))).toThrow(message);
		});
	}

	it("checks its options, whenExhausted as a reply", () => {
		expect(() => createScriptedModel([], loose({ delay: 5 }))).toThrow(/options has unknown field "delay"/);
		expect(() => createScriptedModel([], { delayMs: Number.NaN })).toThrow(/options\.delayMs must be a number of milliseconds, 0 or more, got NaN/);
		expect(() => createScriptedModel([], { chunkSize: 2.5 })).toThrow(/options\.chunkSize must be a whole number/);
		expect(() => createScriptedModel([], { firstEventDelayMs: -1 })).toThrow(/options\.firstEventDelayMs/);
		expect(() => createScriptedModel([], loose({ model: "gpt" }))).toThrow(/options\.model must be an object of model fields/);
		expect(() => createScriptedModel([], loose({ whenExhausted: "done" }))).toThrow(/options\.whenExhausted must be a reply/);
		expect(() => createScriptedModel([], loose(null))).toThrow(/options must be an object of options, got null/);
	});

	it("append checks what it appends, indexed in the whole script, and appends nothing on a mistake", () => {
		const scripted = createScriptedModel([{ content: "one" }]);
		expect(() => scripted.append({ content: "two" }, loose({ content: [{ type: "image" }] }))).toThrow(/replies\[2\]\.content\[0\]\.type/);
		expect(scripted.pending).toBe(1);
	});

	it("takes every well-formed reply, with undefined for fields left out", () => {
		const replies: ScriptedReply[] = [
			{ content: "plain", stopReason: undefined, errorMessage: undefined, usage: undefined, delayMs: undefined, chunkSize: undefined },
			{ content: [{ type: "thinking", thinking: "hm", signature: "s", redacted: false }, { type: "toolCall", name: "t", arguments: { a: [1, { b: null }] }, id: "c1" }], stopReason: "toolUse", usage: { input: 3, output: 0 } },
			{ content: [], stopReason: "error", errorMessage: "overloaded", delayMs: 0, chunkSize: 1 },
		];
		expect(createScriptedModel(replies, { chunkSize: 1, delayMs: 0, firstEventDelayMs: 0, model: { id: "m" }, whenExhausted: { content: "no more" } }).pending).toBe(3);
	});

	it("a reply function's wrong reply plays as an error reply that names it", async () => {
		const reply = await lastReplyOf(createScriptedModel([() => loose<ScriptedReply>({ content: [{ type: "toolCall", name: "t" }] })]));
		expect(reply?.stopReason).toBe("error");
		expect(reply?.errorMessage).toMatch(/createScriptedModel: the reply returned for call 1\.content\[0\]\.arguments must be an object of arguments, got undefined/);
		expect(reply?.content).toEqual([]);
	});
});

describe("createFaultyModel refuses faults it could not inject", () => {
	const cases: [string, unknown, RegExp][] = [
		["a fault of unknown kind", { faults: { 0: { kind: "timeout" } } }, /faults\[0\]\.kind must be one of "stall", "reset", "error", "output-limit", "overflow", got "timeout"/],
		["a negative afterDeltas", { faults: { 1: { kind: "reset", afterDeltas: -2 } } }, /faults\[1\]\.afterDeltas must be a whole number of deltas, 0 or more, got -2/],
		["a key that is no call index", { faults: { first: { kind: "reset" } } }, /faults keys must be call indexes \(0, 1, \.\.\.\), not "first"/],
		["faults as an array of kinds", { faults: "reset" }, /faults must be an object of faults by call index/],
		["a probability given in percent", { random: { seed: 1, probability: 30 } }, /random\.probability must be a number from 0 to 1, got 30/],
		["a random without a seed", { random: { probability: 0.5 } }, /random\.seed must be an integer, got undefined/],
		// The generator takes the seed's whole part: 1.5 replayed seed 1's faults.
		["a seed that is no integer", { random: { seed: 1.5 } }, /random\.seed must be an integer, got 1\.5/],
		// Read as every kind, it injected what the caller left out.
		["no random kinds", { random: { seed: 1, kinds: [] } }, /random\.kinds must name at least one fault kind \(leave it out for all of them\)/],
		["an unknown random kind", { random: { seed: 1, kinds: ["reset", "drop"] } }, /random\.kinds\[1\] must be one of/],
		["a misspelt random field", { random: { seed: 1, kind: ["reset"] } }, /random has unknown field "kind"/],
		// Named as the caller wrote it, with its own options in the list (the scripted model's error named neither).
		["a misspelt scripted option", { chunksize: 3 }, /^createFaultyModel: options has unknown field "chunksize" \(known: faults, random, chunkSize, delayMs, firstEventDelayMs, model, whenExhausted\)$/],
		["a misspelt faults", { fault: { 0: { kind: "reset" } } }, /^createFaultyModel: options has unknown field "fault" \(known: faults, random, /],
	];
	for (const [name, options, message] of cases) {
		it(name, () => {
			expect(() => createFaultyModel([{ content: "x" }], loose<FaultyModelOptions>(options))).toThrow(message);
		});
	}

	it("replies that are no array, named as createFaultyModel's", () => {
		expect(() => createFaultyModel(loose<ScriptedReply[]>({ faults: {} }))).toThrow(/^createFaultyModel: replies must be an array of replies and reply functions, got object$/);
	});

	it("a faults function's wrong fault plays as an error reply that names it, and later calls keep their replies", async () => {
		const model = createFaultyModel([{ content: "first" }, { content: "second" }], { faults: (call) => (call === 0 ? loose({ kind: "drop" }) : undefined) });
		const agent = new Agent({ initialState: { model: model.model }, streamFn: model.streamFn });
		await agent.prompt("Hi");
		const replies = () => agent.state.messages.filter((message): message is AssistantMessage => message.role === "assistant");
		expect(replies()[0]?.errorMessage).toMatch(/createFaultyModel: the fault returned for call 0\.kind must be one of/);
		await agent.prompt("Again");
		expect(replies()[1]?.content).toEqual([{ type: "text", text: "second" }]);
		expect(model.calls).toHaveLength(2);
	});
});
