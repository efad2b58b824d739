/**
 * An inspector attached while a reply streams: the page shows what streamed before the attach at
 * once and grows it with the deltas after, instead of showing nothing until the reply ends.
 */
import { describe, expect, it } from "vitest";
import { Agent, createAssistantMessageEventStream, createScriptedModel } from "../../src/index.js";
import type { AssistantMessage } from "../../src/types/messages.js";
import type { StreamFn } from "../../src/types/stream.js";
import { parseStreamingArguments } from "../../src/providers/partial-json.js";
import type { AssistantEntry, RunModel } from "../../visualizer/model/types.js";
import { assistantsOf, attachRecording, modelOf } from "./attach-helpers.js";

const replyOf = (model: RunModel): AssistantEntry | undefined => assistantsOf(model).at(-1);
const textOf = (entry: AssistantEntry | undefined) => entry?.blocks.map((block) => (block.type === "toolCall" ? `[${block.name}]` : block.text)).join("|");

/** A reply that streams "Hello " and a thinking block, then waits for `release` before "world". */
function pausingStream(): { streamFn: StreamFn; started: Promise<void>; release: () => void } {
	const { model } = createScriptedModel([]);
	let release!: () => void;
	const gate = new Promise<void>((resolve) => (release = resolve));
	let started!: () => void;
	const startedPromise = new Promise<void>((resolve) => (started = resolve));
	const streamFn: StreamFn = () => {
		const stream = createAssistantMessageEventStream();
		const partial: AssistantMessage = { role: "assistant", content: [], api: model.api, provider: model.provider, model: model.id, usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } }, stopReason: "stop", timestamp: Date.now() };
		void (async () => {
			stream.push({ type: "start", partial });
			partial.content.push({ type: "thinking", thinking: "" });
			stream.push({ type: "thinking_start", contentIndex: 0, partial });
			(partial.content[0] as { thinking: string }).thinking += "Plan.";
			stream.push({ type: "thinking_delta", contentIndex: 0, delta: "Plan.", partial });
			stream.push({ type: "thinking_end", contentIndex: 0, content: "Plan.", partial });
			partial.content.push({ type: "text", text: "" });
			stream.push({ type: "text_start", contentIndex: 1, partial });
			(partial.content[1] as { text: string }).text += "Hello ";
			stream.push({ type: "text_delta", contentIndex: 1, delta: "Hello ", partial });
			started();
			await gate;
			(partial.content[1] as { text: string }).text += "world";
			stream.push({ type: "text_delta", contentIndex: 1, delta: "world", partial });
			stream.push({ type: "text_end", contentIndex: 1, content: "Hello world", partial });
			stream.push({ type: "done", reason: "stop", message: partial });
		})();
		return stream;
	};
	return { streamFn, started: startedPromise, release };
}

describe("an inspector attached while a reply streams", () => {
	it("shows what streamed before the attach at once, then grows it with each delta", async () => {
		const { streamFn, started, release } = pausingStream();
		const { model } = createScriptedModel([]);
		const agent = new Agent({ initialState: { model }, streamFn });
		try {
			const run = agent.prompt("Say hello");
			await started;
			await new Promise((resolve) => setTimeout(resolve, 5));
			const { inspector, records } = attachRecording(agent);
			const mid = replyOf(modelOf(records));
			expect(mid?.streaming).toBe(true);
			expect(textOf(mid)).toBe("Plan.|Hello ");
			release();
			await run;
			inspector.flush();
			const done = modelOf(records);
			expect(textOf(replyOf(done))).toBe("Plan.|Hello world");
			expect(done.transcript.filter((entry) => entry.kind === "assistant")).toHaveLength(1);
		} finally {
			agent.dispose();
		}
	});

	it("does not count what streamed before the attach twice when the page is flushed only after later deltas", async () => {
		const { streamFn, started, release } = pausingStream();
		const { model } = createScriptedModel([]);
		const agent = new Agent({ initialState: { model }, streamFn });
		try {
			const run = agent.prompt("Say hello");
			await started;
			const { inspector, records } = attachRecording(agent, { schedule: () => {} }, false);
			// The flush comes after the reply grew: the re-told start must still hold only what had streamed at the attach.
			release();
			await new Promise((resolve) => setTimeout(resolve, 5));
			const beforeEnd = records.length;
			inspector.flush();
			expect(records.length).toBeGreaterThan(beforeEnd);
			await run;
			inspector.flush();
			const shown = modelOf(records);
			expect(textOf(replyOf(shown))).toBe("Plan.|Hello world");
		} finally {
			agent.dispose();
		}
	});

	it("shows a tool call's arguments that stream after the attach, with nothing made up before them, and the whole call once the reply ends", async () => {
		const { model } = createScriptedModel([]);
		let release!: () => void;
		const gate = new Promise<void>((resolve) => (release = resolve));
		let started!: () => void;
		const startedPromise = new Promise<void>((resolve) => (started = resolve));
		let afterDelta!: () => void;
		const deltaSent = new Promise<void>((resolve) => (afterDelta = resolve));
		let finish!: () => void;
		const finished = new Promise<void>((resolve) => (finish = resolve));
		let calls = 0;
		const streamFn: StreamFn = (callModel, context, options) => {
			// The call's result goes back to the model, which answers with a text.
			if (++calls > 1) return createScriptedModel([{ content: "Done." }]).streamFn(callModel, context, options);
			const stream = createAssistantMessageEventStream();
			const partial: AssistantMessage = { role: "assistant", content: [], api: model.api, provider: model.provider, model: model.id, usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } }, stopReason: "toolUse", timestamp: Date.now() };
			void (async () => {
				stream.push({ type: "start", partial });
				const call = { type: "toolCall" as const, id: "c1", name: "read", arguments: {} as Record<string, unknown> };
				partial.content.push(call);
				stream.push({ type: "toolcall_start", contentIndex: 0, partial });
				let json = '{"path":"src/ma';
				call.arguments = parseStreamingArguments(json, call.arguments);
				stream.push({ type: "toolcall_delta", contentIndex: 0, delta: json, partial });
				started();
				await gate;
				json += 'in.ts"}';
				call.arguments = parseStreamingArguments(json, call.arguments);
				stream.push({ type: "toolcall_delta", contentIndex: 0, delta: 'in.ts"}', partial });
				afterDelta();
				await finished;
				stream.push({ type: "toolcall_end", contentIndex: 0, toolCall: call, partial });
				stream.push({ type: "done", reason: "toolUse", message: partial });
			})();
			return stream;
		};
		const agent = new Agent({ initialState: { model }, streamFn });
		try {
			const run = agent.prompt("read");
			await startedPromise;
			await new Promise((resolve) => setTimeout(resolve, 5));
			const { inspector, records } = attachRecording(agent, { schedule: () => {} });
			release();
			await deltaSent;
			// The agent reads the delta off the stream a few microtasks later.
			await new Promise((resolve) => setTimeout(resolve, 5));
			inspector.flush();
			const mid = replyOf(modelOf(records))?.blocks[0] as { type: string; argsText?: string } | undefined;
			expect(mid?.type).toBe("toolCall");
			// Only what streamed after the attach: not the parsed preview's JSON with the raw deltas glued on.
			expect(mid?.argsText).toBe('in.ts"}');
			finish();
			await run;
			inspector.flush();
			const block = assistantsOf(modelOf(records))[0]?.blocks[0] as { type: string; name?: string; args?: unknown };
			expect(block).toMatchObject({ type: "toolCall", name: "read", args: { path: "src/main.ts" } });
		} finally {
			agent.dispose();
		}
	});
});
