/**
 * What no store can write, on a stored session. A tool result whose details held a BigInt (or a
 * cycle) used to break a file-store session for good: its journal entry could not be written, so
 * every later write was a snapshot, which held the same result and failed too; each later model
 * call then failed ("the store could not append a journal entry"), and `save()` rejected for
 * ever. The memory store kept the value as it was, so the same agent passed its tests there. Now
 * every store sees the same thing: the call is answered with an error saying its result could
 * not be stored (as on Restate), a reply that cannot be stored ends the turn as a failed request,
 * a command's input that cannot be is refused with a `TypeError`, and the session goes on.
 */
import { describe, expect, it } from "vitest";
import { Agent } from "../../src/agent.js";
import { createFileStore } from "../../src/durable/file-store.js";
import { type AgentStore, createMemoryStore } from "../../src/durable/store.js";
import { createScriptedModel, toolCall } from "../../src/providers/scripted.js";
import type { AgentEvent } from "../../src/types/agent.js";
import type { StreamFn } from "../../src/types/stream.js";
import type { AgentMessage, AssistantMessage, ToolResultMessage } from "../../src/types/messages.js";
import { expectValidTranscript, makeTool, ok, textOf } from "../agent/helpers.js";
import { useTempDirs } from "../temp-dirs.js";

const tempDir = useTempDirs("agentchart-unstorable-");

interface Cycle {
	self?: Cycle;
}
const cycle: Cycle = {};
cycle.self = cycle;

/** Each store kind, with a way to open the same store again (a reload reads what was written). */
const stores = {
	memory: async () => {
		const store = createMemoryStore();
		return { store, again: () => store };
	},
	file: async () => {
		const dir = await tempDir();
		return { store: createFileStore(dir), again: () => createFileStore(dir) };
	},
} satisfies Record<string, () => Promise<{ store: AgentStore; again: () => AgentStore }>>;

function toolResults(messages: readonly AgentMessage[]): ToolResultMessage[] {
	return messages.filter((message): message is ToolResultMessage => message.role === "toolResult");
}

function replies(messages: readonly AgentMessage[]): AssistantMessage[] {
	return messages.filter((message): message is AssistantMessage => message.role === "assistant");
}

for (const [kind, open] of Object.entries(stores)) {
	describe(`on the ${kind} store`, () => {
		it.each([
			["a BigInt in its details", { total: 10n }, "result.details.total is a BigInt"],
			["a cycle in its details", cycle, "result.details.self is a cycle"],
		])("a tool result with %s is answered as not stored, and the session goes on", async (_name, details, where) => {
			const { store, again } = await open();
			let runs = 0;
			const count = makeTool("count_rows", async () => {
				runs++;
				return ok("12 rows", runs === 1 ? details : {});
			});
			const scripted = createScriptedModel([{ content: [toolCall("count_rows", {}, "a")] }, { content: "done" }, { content: "second" }]);
			const agent = new Agent({ initialState: { model: scripted.model, tools: [count] }, streamFn: scripted.streamFn, store, sessionId: "s" });
			await agent.prompt("count");
			await agent.prompt("again");
			await agent.saved();
			expect(agent.storeProblems).toEqual([]);
			const [result] = toolResults(agent.state.messages);
			expect(result?.isError).toBe(true);
			expect(textOf(result)).toContain(`Tool "count_rows" ran, but its result could not be stored: it is not JSON-serializable (${where}`);
			expect(textOf(result)).toContain("What the tool did has taken effect");
			expect(replies(agent.state.messages).map((reply) => reply.stopReason)).toEqual(["toolUse", "stop", "stop"]);
			expect(runs).toBe(1);
			const loaded = await Agent.load({ store: again(), sessionId: "s", initialState: { tools: [count] }, streamFn: scripted.streamFn });
			expect(loaded.state.messages).toEqual(JSON.parse(JSON.stringify(agent.state.messages)));
			expectValidTranscript(loaded.state.messages);
			expect(runs).toBe(1);
			await loaded.saved();
		});

		it("progress no store can write reaches listeners but is not journaled; the call's result is kept", async () => {
			const { store } = await open();
			const progress = makeTool("build", async (_id, _args, _signal, onUpdate) => {
				onUpdate?.(ok("step 1", { bytes: 1n }));
				return ok("built");
			});
			const scripted = createScriptedModel([{ content: [toolCall("build", {}, "a")] }, { content: "done" }]);
			const agent = new Agent({ initialState: { model: scripted.model, tools: [progress] }, streamFn: scripted.streamFn, store, sessionId: "s" });
			const updates: unknown[] = [];
			agent.subscribe((event: AgentEvent) => {
				if (event.type === "tool_execution_update") updates.push(event.partialResult);
			});
			await agent.prompt("build");
			await agent.saved();
			expect(agent.storeProblems).toEqual([]);
			expect(updates).toEqual([ok("step 1", { bytes: 1n })]);
			expect(textOf(toolResults(agent.state.messages)[0])).toBe("built");
		});

		it("a model reply no store can write ends the turn as a failed request, and the next prompt works", async () => {
			const { store, again } = await open();
			const scripted = createScriptedModel([{ content: "counted" }, { content: "fine" }]);
			// A provider that passes its raw usage through: the first reply's count is a BigInt.
			let calls = 0;
			const streamFn: StreamFn = async (model, context, options) => {
				const stream = await scripted.streamFn(model, context, options);
				const first = ++calls === 1;
				const raw = (message: AssistantMessage): AssistantMessage => (first ? Object.assign({}, message, { providerUsage: { cached: 5n } }) : message);
				return {
					async *[Symbol.asyncIterator]() {
						for await (const event of stream) yield event.type === "done" ? { ...event, message: raw(event.message) } : event;
					},
					result: async () => raw(await stream.result()),
				};
			};
			const agent = new Agent({ initialState: { model: scripted.model }, streamFn, store, sessionId: "s" });
			await agent.prompt("one");
			await agent.prompt("two");
			await agent.saved();
			expect(agent.storeProblems).toEqual([]);
			const [first, second] = replies(agent.state.messages);
			expect(first?.stopReason).toBe("error");
			expect(first?.errorMessage).toContain("The model's reply could not be stored: it is not JSON-serializable (message.providerUsage.cached is a BigInt)");
			expect(textOf(second)).toBe("fine");
			const loaded = await Agent.load({ store: again(), sessionId: "s", initialState: {}, streamFn: scripted.streamFn });
			expect(loaded.state.messages).toEqual(JSON.parse(JSON.stringify(agent.state.messages)));
			await loaded.saved();
		});

		it("a command's input no store can write is refused with a TypeError naming it, and nothing is recorded", async () => {
			const { store } = await open();
			const scripted = createScriptedModel([{ content: "hi" }]);
			const agent = new Agent({ initialState: { model: scripted.model }, streamFn: scripted.streamFn, store, sessionId: "s" });
			const odd = { role: "user", content: "hello", timestamp: 1, extra: 2n } as unknown as AgentMessage;
			await expect(agent.prompt(odd)).rejects.toThrow(new TypeError("agentchart: prompt(...) messages[0].extra is a BigInt: an agent with a store keeps only what JSON can write (the store writes it)"));
			expect(() => agent.steer(odd)).toThrow(/steer\(message\)\.extra is a BigInt/);
			expect(() => agent.followUp(odd)).toThrow(/followUp\(message\)\.extra is a BigInt/);
			expect(agent.state.messages).toEqual([]);
			expect(agent.hasQueuedMessages()).toBe(false);
			await agent.prompt("hello");
			await agent.saved();
			expect(agent.storeProblems).toEqual([]);
		});

		it("approve() with arguments no store can write throws, and the call still waits", async () => {
			const { store } = await open();
			const deploy = makeTool("deploy", async () => ok("deployed"), { needsApproval: true });
			const scripted = createScriptedModel([{ content: [toolCall("deploy", { to: "staging" }, "a")] }, { content: "done" }]);
			const agent = new Agent({ initialState: { model: scripted.model, tools: [deploy] }, streamFn: scripted.streamFn, store, sessionId: "s" });
			const waiting = new Promise<void>((resolve) => agent.subscribe((event: AgentEvent) => {
					if (event.type === "approval_requested") resolve();
				}));
			const run = agent.prompt("deploy");
			await waiting;
			expect(() => agent.approve("a", { arguments: { to: "prod", replicas: 3n } })).toThrow(/approve\("a", options\)\.arguments\.replicas is a BigInt/);
			expect(agent.pendingApprovals.map((pending) => pending.toolCallId)).toEqual(["a"]);
			await agent.approve("a", { arguments: { to: "prod" } });
			await run;
			await agent.saved();
			expect(textOf(toolResults(agent.state.messages)[0])).toBe("deployed");
		});
	});
}

describe("without a store", () => {
	it("a tool's result is kept as it is, as pi keeps it", async () => {
		const count = makeTool("count_rows", async () => ok("12 rows", { total: 10n }));
		const scripted = createScriptedModel([{ content: [toolCall("count_rows", {}, "a")] }, { content: "done" }]);
		const agent = new Agent({ initialState: { model: scripted.model, tools: [count] }, streamFn: scripted.streamFn });
		await agent.prompt("count");
		expect(toolResults(agent.state.messages)[0]?.details).toEqual({ total: 10n });
		await agent.prompt({ role: "user", content: "more", timestamp: 1, extra: 2n } as unknown as AgentMessage);
		expect(agent.state.messages).toHaveLength(6);
	});
});
