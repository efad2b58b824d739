/**
 * Defects an adversarial probe of compaction found (2026-12-07), each fixed, each test failing
 * before its fix:
 * - the default summariser ignored `getApiKey`: an agent whose key comes from it (the demo, every
 *   page) could never compact, by threshold, overflow or `compact()`;
 * - a run restored while its overflow compaction ran no longer knew the overflowed reply (the
 *   run's reply and the transcript's last message, one object before, two after JSON): the
 *   compaction summarised it (`keepRecentTokens: 0`) or kept it, and the retried request went out
 *   without the user's question;
 * - a listener that replaced `state.messages` with equal copies during a compaction brought the
 *   summarised history back after the summary;
 * - `reserveTokens` of 0 asked the summary for `maxTokens: 0`, and `Infinity` was accepted;
 * - a reply cut off by the output limit before any output with the window full (an overflow by
 *   `isContextOverflow`) ended the run as an empty answer, with no error and no compaction.
 */
import { describe, expect, it } from "vitest";
import { Agent } from "../../src/agent.js";
import { createScriptedModel } from "../../src/providers/scripted.js";
import type { AgentMessage } from "../../src/types/messages.js";
import type { StreamFn } from "../../src/types/stream.js";
import { assistant, sleep, user } from "../agent/helpers.js";

function history(turns: number): AgentMessage[] {
	const messages: AgentMessage[] = [];
	for (let i = 0; i < turns; i++) messages.push(user(`q${i} ${"q".repeat(400)}`), assistant(`a${i} ${"a".repeat(400)}`));
	return messages;
}

async function until(condition: () => boolean, what: string): Promise<void> {
	for (let i = 0; i < 1000; i++) {
		if (condition()) return;
		await sleep(2);
	}
	throw new Error(`timed out waiting for ${what}`);
}

describe("the default summariser", () => {
	it("gets its API key from getApiKey, as each model call of a run does", async () => {
		const keys: (string | undefined)[] = [];
		const scripted = createScriptedModel([{ content: "## Goal\nsummary" }, { content: "answer" }]);
		const streamFn: StreamFn = (model, context, options) => {
			keys.push(options?.apiKey);
			return scripted.streamFn(model, context, options);
		};
		const agent = new Agent({ initialState: { model: scripted.model, messages: history(6) }, streamFn, getApiKey: async (provider) => `key-for-${provider}`, compaction: { enabled: true, keepRecentTokens: 150 } });
		await agent.compact();
		await agent.prompt("go on");
		expect(keys).toEqual(["key-for-scripted", "key-for-scripted"]);
	});

	it("asks for at least 1,024 tokens and at most the model's maxTokens", async () => {
		const asked: (number | undefined)[] = [];
		for (const [reserveTokens, maxTokens] of [
			[0, 64_000],
			[100, 64_000],
			[16_384, 64_000],
			[16_384, 4_096],
		] as const) {
			const scripted = createScriptedModel([{ content: "summary" }], { model: { maxTokens } });
			const streamFn: StreamFn = (model, context, options) => {
				asked.push(options?.maxTokens);
				return scripted.streamFn(model, context, options);
			};
			const agent = new Agent({ initialState: { model: scripted.model, messages: history(6) }, streamFn, compaction: { enabled: true, keepRecentTokens: 150, reserveTokens } });
			await agent.compact();
		}
		expect(asked).toEqual([1024, 1024, 13_107, 4_096]);
	});

	it("refuses an infinite reserveTokens or keepRecentTokens", async () => {
		const scripted = createScriptedModel([{ content: "hi" }]);
		for (const field of ["reserveTokens", "keepRecentTokens"] as const) {
			const agent = new Agent({ initialState: { model: scripted.model }, streamFn: scripted.streamFn, compaction: { enabled: true, [field]: Number.POSITIVE_INFINITY } });
			await expect(agent.prompt("go")).rejects.toThrow(new TypeError(`agent.compaction has ${field} Infinity: it must be a finite number of tokens, at least 0`));
		}
	});
});

describe("an overflow compaction restored from a snapshot taken while it ran", () => {
	/** The run of a question whose first reply overflows: uninterrupted, or restored while it compacts. */
	async function overflowRun(keepRecentTokens: number, restart: boolean) {
		const scripted = createScriptedModel([{ content: "", stopReason: "error", errorMessage: "prompt is too long: 150000 tokens > 100000 maximum" }, { content: "Paris" }]);
		let asked = false;
		const summarised: string[] = [];
		const summarize = (hang: boolean) => async (request: { messages: AgentMessage[]; turnPrefix: AgentMessage[] }) => {
			summarised.push(...[...request.messages, ...request.turnPrefix].map((message) => (message.role === "assistant" ? `assistant:${message.stopReason}` : message.role)));
			asked = true;
			return hang ? new Promise<string>(() => {}) : "summary";
		};
		const first = new Agent({ initialState: { model: scripted.model, messages: history(1) }, streamFn: scripted.streamFn, compaction: { enabled: true, keepRecentTokens, summarize: summarize(restart) } });
		const run = first.prompt("What is the capital of France?");
		let agent = first;
		if (restart) {
			await until(() => asked, "the summariser");
			const snapshot = JSON.parse(JSON.stringify(first.snapshot()));
			first.dispose();
			summarised.length = 0;
			agent = Agent.restore(snapshot, { streamFn: scripted.streamFn, compaction: { enabled: true, keepRecentTokens, summarize: summarize(false) } });
			await agent.waitForIdle();
		} else {
			await run;
		}
		const retried = (scripted.calls[1]?.messages ?? []).map((message) => (message.role === "assistant" ? `assistant:${message.stopReason}` : message.role));
		return { summarised, retried, transcript: agent.state.messages.map((message) => (message.role === "assistant" ? `assistant:${message.stopReason}` : message.role)) };
	}

	for (const keepRecentTokens of [0, 10]) {
		it(`leaves the overflowed reply out and retries with the question, as a run without a restart does (keepRecentTokens ${keepRecentTokens})`, async () => {
			const uninterrupted = await overflowRun(keepRecentTokens, false);
			const restored = await overflowRun(keepRecentTokens, true);
			expect(uninterrupted.summarised).not.toContain("assistant:error");
			expect(uninterrupted.retried.at(-1)).toBe("user");
			expect(restored).toEqual(uninterrupted);
		});
	}
});

describe("state.messages replaced with equal copies while a compaction runs", () => {
	it("the copies are the compaction's: the summarised messages do not come back", async () => {
		let release!: (summary: string) => void;
		const scripted = createScriptedModel([{ content: "next" }]);
		const agent = new Agent({
			initialState: { model: scripted.model, messages: history(6) },
			streamFn: scripted.streamFn,
			compaction: { enabled: true, keepRecentTokens: 150, summarize: () => new Promise<string>((resolve) => (release = resolve)) },
		});
		const compacting = agent.compact();
		await until(() => release !== undefined, "the summariser");
		const added = user("added while compacting");
		agent.state.messages = [...structuredClone(agent.state.messages), added];
		release("summary");
		const result = await compacting;
		expect(agent.state.messages.map((message) => message.role)).toEqual(["compactionSummary", ...Array.from({ length: result.messagesKept }, () => expect.any(String)), "user"]);
		expect(agent.state.messages).toHaveLength(1 + result.messagesKept + 1);
		expect(agent.state.messages.at(-1)).toBe(added);
	});
});

describe("a reply cut off before any output with the window full", () => {
	const noRoom = { content: [], stopReason: "length" as const, usage: { input: 99_500, output: 0 } };

	it("is an overflow: compacted away, and the call made again", async () => {
		const scripted = createScriptedModel([noRoom, { content: "answer" }], { model: { contextWindow: 100_000 } });
		const events: string[] = [];
		const agent = new Agent({ initialState: { model: scripted.model, messages: history(6) }, streamFn: scripted.streamFn, compaction: { enabled: true, keepRecentTokens: 150, summarize: async () => "summary" } });
		agent.subscribe((event) => {
			if (event.type === "auto_compaction_start" || event.type === "auto_compaction_end") events.push(`${event.type}:${event.reason}`);
		});
		await agent.prompt("go");
		expect(scripted.calls).toHaveLength(2);
		expect(events).toEqual(["auto_compaction_start:overflow", "auto_compaction_end:overflow"]);
		expect(agent.state.messages.at(-1)).toMatchObject({ role: "assistant", stopReason: "stop" });
		expect(agent.state.messages.some((message) => message.role === "assistant" && message.content.length === 0)).toBe(false);
		expect(agent.state.errorMessage).toBeUndefined();
	});

	it("a second one in the run ends it with the recovery's error, not as an empty answer", async () => {
		const scripted = createScriptedModel([noRoom, noRoom], { model: { contextWindow: 100_000 } });
		const agent = new Agent({ initialState: { model: scripted.model, messages: history(6) }, streamFn: scripted.streamFn, compaction: { enabled: true, keepRecentTokens: 150, summarize: async () => "summary" } });
		await agent.prompt("go");
		expect(agent.state.messages.at(-1)).toMatchObject({ role: "assistant", stopReason: "error" });
		expect(agent.state.errorMessage).toMatch(/^Context overflow recovery failed after one compact-and-retry attempt\. [\s\S]*\(The context window is full: the reply was cut off by the output limit before any output, with 99500 of the model's 100000 tokens taken by the input\)$/);
	});

	it("with compaction off it stays what the provider said, as in pi", async () => {
		const scripted = createScriptedModel([noRoom], { model: { contextWindow: 100_000 } });
		const agent = new Agent({ initialState: { model: scripted.model }, streamFn: scripted.streamFn });
		await agent.prompt("go");
		expect(agent.state.messages.at(-1)).toMatchObject({ role: "assistant", stopReason: "length", content: [] });
	});
});
