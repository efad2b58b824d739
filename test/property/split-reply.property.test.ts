/**
 * Property: cutting a failed streaming reply in two (`splitFailedStreamingReply`) loses and
 * duplicates nothing. Whatever the order of text, thinking and tool-call blocks, and whichever
 * calls had started (in any position, some perhaps missing from the provider's final
 * message), every block of the reply lands in exactly one part, each part keeps the reply's
 * order, the cut is at the last call that started, the committed part holds exactly the calls
 * that started (so their results answer it), and the failed part keeps the failure. Ids are
 * drawn from a small pool, so a reply often repeats one: calls are told apart by occurrence,
 * never by id alone.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { callKeyFor } from "../../src/machines/run-helpers.js";
import { splitFailedStreamingReply } from "../../src/machines/streaming-tools.js";
import type { ToolBatch, ToolCallEntry, ToolCallStatus } from "../../src/machines/types.js";
import type { ToolCall } from "../../src/types/content.js";
import type { AssistantMessage } from "../../src/types/messages.js";

// A pure function: hundreds of runs take milliseconds, so the mutation run's low PROPERTY_RUNS is a floor here, not a cap.
const NUM_RUNS = Math.max(300, Number(process.env["PROPERTY_RUNS"] ?? 0));
const SEED = Number(process.env["PROPERTY_SEED"] ?? Date.now() % 2 ** 31);

type Block = AssistantMessage["content"][number];

const blockArb: fc.Arbitrary<"text" | "thinking" | "call"> = fc.constantFrom("text", "thinking", "call", "call");
const startedStatuses: ToolCallStatus[] = ["preparing", "prepared", "running", "settled"];

interface Case {
	kinds: ("text" | "thinking" | "call")[];
	/** Per call of the message: started, and with which status. */
	started: (ToolCallStatus | undefined)[];
	/** Started calls the provider's final message lost. */
	missing: number;
	/** Per call (the message's, then the lost ones): which id of a pool of three it has. */
	ids: number[];
	stopReason: "error" | "aborted";
}

const caseArb: fc.Arbitrary<Case> = fc.record({
	kinds: fc.array(blockArb, { minLength: 0, maxLength: 8 }),
	started: fc.array(fc.option(fc.constantFrom(...startedStatuses), { nil: undefined }), { minLength: 8, maxLength: 8 }),
	missing: fc.integer({ min: 0, max: 2 }),
	ids: fc.array(fc.integer({ min: 0, max: 2 }), { minLength: 10, maxLength: 10 }),
	stopReason: fc.constantFrom<"error" | "aborted">("error", "aborted"),
});

function build(c: Case): { message: AssistantMessage; batch: ToolBatch; startedCalls: Set<ToolCall>; missingCalls: ToolCall[] } {
	let callIndex = 0;
	const idOf = () => `call_${c.ids[callIndex++] ?? 0}`;
	const content: Block[] = c.kinds.map((kind, i) => {
		if (kind === "text") return { type: "text", text: `text ${i}` };
		if (kind === "thinking") return { type: "thinking", thinking: `thought ${i}` };
		return { type: "toolCall", id: idOf(), name: "work", arguments: { i } };
	});
	const calls = content.filter((block): block is ToolCall => block.type === "toolCall");
	const entries: ToolCallEntry[] = [];
	const entry = (toolCall: ToolCall, status: ToolCallStatus | undefined) =>
		entries.push({ key: callKeyFor(entries, toolCall.id), toolCall, status: status ?? "queued", started: status !== undefined, message: undefined });
	calls.forEach((toolCall, i) => entry(toolCall, c.started[i]));
	const missingCalls: ToolCall[] = Array.from({ length: c.missing }, (_, i) => ({ type: "toolCall", id: idOf(), name: "work", arguments: { lost: i } }));
	for (const toolCall of missingCalls) entry(toolCall, "running");
	const message: AssistantMessage = {
		role: "assistant",
		content,
		api: "scripted",
		provider: "scripted",
		model: "m",
		usage: { input: 10, output: 5, cacheRead: 0, cacheWrite: 0, totalTokens: 15, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
		stopReason: c.stopReason,
		errorMessage: "connection lost",
		timestamp: 1,
	};
	const startedCalls = new Set(entries.filter((each) => each.status !== "queued").map((each) => each.toolCall));
	return { message, batch: { assistant: message, mode: "streaming", calls: entries, truncated: false, actorStarted: true, effectPrefix: "r1.t1" }, startedCalls, missingCalls };
}

/** True when `part` appears in `whole` in the same order (each element used once). */
function isSubsequence<T>(part: readonly T[], whole: readonly T[]): boolean {
	let at = 0;
	for (const item of whole) if (at < part.length && part[at] === item) at++;
	return at === part.length;
}

describe("splitting a failed streaming reply (fast-check)", () => {
	it("every block lands in exactly one part, in order; the committed part holds exactly the started calls", () => {
		console.log(`split property seed: ${SEED}  (PROPERTY_SEED=${SEED} to replay)`);
		fc.assert(
			fc.property(caseArb, (c) => {
				const { message, batch, startedCalls, missingCalls } = build(c);
				const split = splitFailedStreamingReply(message, batch);
				if (startedCalls.size === 0) {
					expect(split).toBeUndefined();
					return;
				}
				if (!split) throw new Error("a reply with started calls was not split");
				const { committed, failed } = split;
				// Nothing lost, nothing twice: the parts together are the reply plus the calls it lost.
				const together = [...committed.content, ...failed.content];
				expect(new Set(together).size).toBe(together.length);
				expect(together.length).toBe(message.content.length + missingCalls.length);
				for (const block of message.content) expect(together).toContain(block);
				// Each part keeps the reply's order.
				const ownBlocks = committed.content.filter((block) => message.content.includes(block));
				expect(isSubsequence(ownBlocks, message.content)).toBe(true);
				expect(isSubsequence(failed.content, message.content)).toBe(true);
				// The cut is at the last call that started: text and thinking before it are committed, after it failed.
				const lastStarted = message.content.findLastIndex((block) => block.type === "toolCall" && startedCalls.has(block));
				message.content.forEach((block, index) => {
					if (block.type === "toolCall") return;
					expect(index < lastStarted ? committed.content : failed.content).toContain(block);
				});
				// The committed part's calls are exactly the started ones; the failed part has none of them.
				const committedCalls = committed.content.filter((block) => block.type === "toolCall");
				expect(committedCalls.length).toBe(startedCalls.size);
				for (const block of committedCalls) expect(startedCalls.has(block)).toBe(true);
				for (const block of failed.content) if (block.type === "toolCall") expect(startedCalls.has(block)).toBe(false);
				// The committed part answered (its calls ran); the failed part keeps the failure.
				expect(committed.stopReason).toBe("toolUse");
				expect(committed.errorMessage).toBeUndefined();
				expect(committed.usage).toEqual(message.usage);
				expect(failed.stopReason).toBe(message.stopReason);
				expect(failed.errorMessage).toBe("connection lost");
				expect(failed.usage.totalTokens).toBe(0);
			}),
			{
				numRuns: NUM_RUNS,
				seed: SEED,
				// Always checked, whatever the seed: a call that never started before one that ran, and
				// text between the last call that ran and a later call that never started.
				examples: [
					[{ kinds: ["call", "call", "text"], started: [undefined, "running", undefined, undefined, undefined, undefined, undefined, undefined], missing: 0, ids: [0, 1, 2, 0, 0, 0, 0, 0, 0, 0], stopReason: "error" }],
					[{ kinds: ["text", "call", "thinking", "call"], started: ["settled", undefined, undefined, undefined, undefined, undefined, undefined, undefined], missing: 1, ids: [0, 1, 2, 0, 0, 0, 0, 0, 0, 0], stopReason: "aborted" }],
					// Two calls with one id, only the second started: the first is not committed in its place.
					[{ kinds: ["call", "text", "call"], started: [undefined, "running", undefined, undefined, undefined, undefined, undefined, undefined], missing: 0, ids: [0, 0, 0, 0, 0, 0, 0, 0, 0, 0], stopReason: "error" }],
				],
			},
		);
	}, Math.max(30_000, NUM_RUNS * 100));
});
