/**
 * A hook that answers what the engine does not take as meant is reported (`hook-contract`). The
 * engine follows pi: a `beforeToolCall` answering the string "block" (or `{ blocked: true }`)
 * raises no objection, so the call it meant to stop runs; an `afterToolCall` whose `content` is
 * not a list of text and image blocks turns the call's result into an error. Both passed the kit
 * without a word: a refund the hook was written to stop ran on every path.
 */
import { describe, expect, it } from "vitest";
import { createScriptedModel } from "../../src/providers/scripted.js";
import { exploreAgent } from "../../src/testing/explore.js";
import { fuzzAgent } from "../../src/testing/fuzz.js";
import { afterToolCallAnswer, beforeToolCallAnswer } from "../../src/testing/instrument/checked-calls.js";
import type { AfterToolCallResult, BeforeToolCallResult } from "../../src/types/agent.js";
import { factory, lookup, quiet } from "./user-agent.js";

const model = createScriptedModel([]).model;
const loose = <T>(value: unknown): T => value as T;

describe("exploreAgent and fuzzAgent report a hook's answer the engine misreads", () => {
	it("beforeToolCall answering the string \"block\"", async () => {
		const blocksWithAString = factory(() => ({ initialState: { model, tools: [lookup()] }, beforeToolCall: async () => loose<BeforeToolCallResult>("block") }));
		const explored = await exploreAgent(blocksWithAString, { restores: false });
		expect(explored.format()).toMatch(/\[hook-contract\] beforeToolCall on its 1st call \(tool "lookup_order", call \w+\) returned "block", which the engine reads as no objection: the call runs \(to stop it, return \{ block: true, reason \}\)/);
		const fuzzed = await fuzzAgent(blocksWithAString, { runs: 20, seed: 3, ...quiet });
		expect(fuzzed.violations.map((each) => each.rule)).toContain("hook-contract");
	}, 120_000);

	it("afterToolCall answering content that is not content blocks", async () => {
		const textContent = factory(() => ({ initialState: { model, tools: [lookup()] }, afterToolCall: async () => loose<AfterToolCallResult>({ content: "audited" }) }));
		const explored = await exploreAgent(textContent, { restores: false });
		expect(explored.format()).toMatch(/\[hook-contract\] afterToolCall on its 1st call \(tool "lookup_order", call \w+\) returned content "audited", not a list of text and image blocks: the engine answered the call with an error result/);
		const fuzzed = await fuzzAgent(textContent, { runs: 20, seed: 3, ...quiet });
		expect(fuzzed.violations.map((each) => each.rule)).toContain("hook-contract");
	}, 120_000);

	it("well-formed answers are not reported", async () => {
		const wellFormed = factory(() => ({
			initialState: { model, tools: [lookup()] },
			beforeToolCall: async ({ toolCall }) => (toolCall.id.endsWith("7") ? { block: true, reason: "not today", terminate: false } : undefined),
			afterToolCall: async ({ result }) => ({ content: [...result.content, { type: "text", text: "(audited)" }], details: result.details, isError: false }),
		}));
		const explored = await exploreAgent(wellFormed, { restores: false });
		expect(explored.violations, explored.format()).toEqual([]);
	}, 120_000);
});

describe("what is wrong with an answer, as the engine reads it", () => {
	it.each([
		[undefined, undefined],
		[null, undefined],
		[{}, undefined],
		[{ block: true, reason: "no", terminate: true }, undefined],
		[{ approval: "required", reason: "refunds need a person" }, undefined],
		[true, "true, which the engine reads as no objection: the call runs (to stop it, return { block: true, reason })"],
		[{ blocked: true }, 'an answer with a field the engine does not read, "blocked" (the engine reads only block, reason, terminate, approval)'],
		[{ block: "yes" }, 'block: "yes" where the engine reads true or false'],
		[{ approval: "optional" }, 'approval: "optional" where the engine reads only "required"'],
		[{ block: true, reason: 5 }, "reason: 5 where the engine reads text"],
	])("beforeToolCall %j", (answer, wrong) => {
		expect(beforeToolCallAnswer(answer)).toBe(wrong);
	});

	it.each([
		[undefined, undefined],
		[{ details: { audited: true } }, undefined],
		[{ content: [{ type: "image", data: "AAAA", mimeType: "image/png" }], isError: true, terminate: false }, undefined],
		[{ content: [{ type: "text" }] }, "content [ { type: 'text' } ], not a list of text and image blocks: the engine answered the call with an error result"],
		[{ result: { content: [] } }, 'an answer with a field the engine does not read, "result" (the engine reads only content, details, isError, terminate)'],
		[{ isError: "no" }, 'isError: "no" where the engine reads true or false'],
		["done", '"done", which the engine ignores (return { content, details, isError, terminate } to change the result)'],
	])("afterToolCall %j", (answer, wrong) => {
		expect(afterToolCallAnswer(answer)).toBe(wrong);
	});
});
