import { Type } from "typebox";
import { describe, expect, it } from "vitest";
import { Agent } from "../../src/agent.js";
import { outputLimitResumeText } from "../../src/machines/actions/run.js";
import { createScriptedModel, text, toolCall } from "../../src/providers/scripted.js";
import type { AgentTool } from "../../src/types/agent.js";
import type { ToolCall } from "../../src/types/content.js";
import type { AssistantMessage, Message } from "../../src/types/messages.js";
import type { StreamFn } from "../../src/types/stream.js";
import { AssistantMessageEventStream } from "../../src/index.js";
import { providerRequestViolations } from "../../src/testing/provider-requests.js";

const writeParameters = Type.Object({ path: Type.String(), content: Type.String() });
const write: AgentTool<typeof writeParameters> = {
	name: "write",
	label: "Write",
	description: "writes a file",
	parameters: writeParameters,
	async execute(_id, { path }) {
		return { content: [{ type: "text", text: `wrote ${path}` }], details: {} };
	},
};

function lastUserText(messages: Message[]): string | undefined {
	const last = messages.at(-1);
	if (last?.role !== "user" || typeof last.content === "string") return undefined;
	const block = last.content[0];
	return block?.type === "text" ? block.text : undefined;
}

describe("output limit recovery (outputLimitRecovery, opt-in)", () => {
	it("is off by default: a reply cut off by the limit ends the run, as in pi", async () => {
		const scripted = createScriptedModel([{ content: "Hello wor", stopReason: "length" }, { content: "unused" }]);
		const agent = new Agent({ initialState: { model: scripted.model }, streamFn: scripted.streamFn });
		await agent.prompt("Say hello world");
		expect(scripted.calls).toHaveLength(1);
		expect(agent.state.messages.at(-1)).toMatchObject({ role: "assistant", stopReason: "length" });
	});

	it("asks the model to resume where it stopped, and ends when the reply completes", async () => {
		const scripted = createScriptedModel([{ content: "Hello wor", stopReason: "length" }, { content: "ld!" }]);
		const agent = new Agent({ initialState: { model: scripted.model }, streamFn: scripted.streamFn, outputLimitRecovery: { maxAttempts: 3 } });
		await agent.prompt("Say hello world");
		expect(scripted.calls).toHaveLength(2);
		expect(lastUserText(scripted.calls[1]?.messages ?? [])).toBe(outputLimitResumeText(false));
		const roles = agent.state.messages.map((m) => `${m.role}${m.role === "assistant" ? `:${m.stopReason}` : ""}`);
		expect(roles).toEqual(["user", "assistant:length", "user", "assistant:stop"]);
		expect(providerRequestViolations(agent.state.messages)).toEqual([]);
	});

	it("exports the resume instructions from agentchart, as docs/faults.md says, so an application can tell the resume turns from the user's", async () => {
		const { outputLimitResumeText: exported } = await import("../../src/index.js");
		expect(typeof exported).toBe("function");
		expect(exported(false)).toBe(outputLimitResumeText(false));
		expect(exported(true)).toBe(outputLimitResumeText(true));
	});

	it("gives up after maxAttempts cut-off replies in a row", async () => {
		const scripted = createScriptedModel([
			{ content: "a", stopReason: "length" },
			{ content: "b", stopReason: "length" },
			{ content: "c", stopReason: "length" },
			{ content: "never" },
		]);
		const agent = new Agent({ initialState: { model: scripted.model }, streamFn: scripted.streamFn, outputLimitRecovery: { maxAttempts: 2 } });
		await agent.prompt("long answer please");
		expect(scripted.calls).toHaveLength(3);
		expect(agent.state.messages.at(-1)).toMatchObject({ role: "assistant", stopReason: "length" });
	});

	it("in streaming mode, a call that finished streaming before the limit ran: the model is asked to continue", async () => {
		const scripted = createScriptedModel([
			{ content: [toolCall("write", { path: "a.txt", content: "x" }), text("And now the long par")], stopReason: "length" },
			{ content: "t." },
		]);
		const agent = new Agent({ initialState: { model: scripted.model, tools: [write] }, streamFn: scripted.streamFn, toolExecution: "streaming", outputLimitRecovery: { maxAttempts: 1 } });
		await agent.prompt("write a.txt and explain");
		const second = scripted.calls[1]?.messages ?? [];
		expect(second[2]).toMatchObject({ role: "toolResult", isError: false });
		expect(lastUserText(second)).toBe(outputLimitResumeText(false));
		expect(providerRequestViolations(agent.state.messages)).toEqual([]);
	});

	it("in streaming mode, a call complete before the limit ran and one was cut off: the model is asked for the cut-off one only", async () => {
		// Before, it was told that the calls did not run and to issue them again: the one that ran would run twice.
		const written: string[] = [];
		const counted: AgentTool<typeof writeParameters> = { ...write, execute: async (_id, { path }) => (written.push(path), { content: [{ type: "text", text: `wrote ${path}` }], details: {} }) };
		const usage = { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
		const requests: Message[][] = [];
		const model = createScriptedModel([]).model;
		const streamFn: StreamFn = (_model, context) => {
			requests.push([...context.messages]);
			const stream = new AssistantMessageEventStream();
			const reply: AssistantMessage = { role: "assistant", content: [], api: model.api, provider: model.provider, model: model.id, usage, stopReason: requests.length === 1 ? "length" : "stop", timestamp: Date.now() };
			void (async () => {
				stream.push({ type: "start", partial: reply });
				if (requests.length === 1) {
					const whole: ToolCall = { type: "toolCall", id: "w1", name: "write", arguments: { path: "a.txt", content: "x" } };
					reply.content.push(whole);
					stream.push({ type: "toolcall_start", contentIndex: 0, partial: reply });
					stream.push({ type: "toolcall_end", contentIndex: 0, toolCall: whole, partial: reply });
					await new Promise((resolve) => setTimeout(resolve, 5));
					reply.content.push({ type: "toolCall", id: "w2", name: "write", arguments: { path: "b.txt" } });
					stream.push({ type: "toolcall_start", contentIndex: 1, partial: reply });
					stream.push({ type: "toolcall_delta", contentIndex: 1, delta: '{"path":"b.txt","con', partial: reply });
					stream.push({ type: "done", reason: "length", message: reply });
				} else {
					reply.content.push({ type: "text", text: "Done." });
					stream.push({ type: "done", reason: "stop", message: reply });
				}
			})();
			return stream;
		};
		const agent = new Agent({ initialState: { model, tools: [counted] }, streamFn, toolExecution: "streaming", outputLimitRecovery: { maxAttempts: 1 } });
		await agent.prompt("write a.txt and b.txt");
		const second = requests[1] ?? [];
		expect(second.map((m) => (m.role === "toolResult" ? `toolResult:${m.toolCallId}:${m.isError}` : m.role))).toEqual(["user", "assistant", "toolResult:w1:false", "toolResult:w2:true", "user"]);
		expect(lastUserText(second)).toBe(outputLimitResumeText(true, true));
		expect(lastUserText(second)).toContain("Issue only the cut-off calls again");
		expect(written).toEqual(["a.txt"]);
		expect(providerRequestViolations(agent.state.messages)).toEqual([]);
	});

	for (const mode of ["parallel", "sequential"] as const) {
		it(`asks again for tool calls the limit cut off, which did not run (${mode})`, async () => {
			const scripted = createScriptedModel([
				{ content: [text("Writing it."), toolCall("write", { path: "big.txt", content: "lots" })], stopReason: "length" },
				{ content: [toolCall("write", { path: "big.txt", content: "part 1" })] },
				{ content: "Done." },
			]);
			const agent = new Agent({ initialState: { model: scripted.model, tools: [write] }, streamFn: scripted.streamFn, toolExecution: mode, outputLimitRecovery: { maxAttempts: 1 } });
			await agent.prompt("write big.txt");
			const second = scripted.calls[1]?.messages ?? [];
			expect(second.map((m) => m.role)).toEqual(["user", "assistant", "toolResult", "user"]);
			expect(second[2]).toMatchObject({ role: "toolResult", isError: true });
			expect(lastUserText(second)).toBe(outputLimitResumeText(true));
			expect(scripted.calls).toHaveLength(3);
			expect(agent.state.messages.at(-1)).toMatchObject({ role: "assistant", stopReason: "stop" });
			expect(providerRequestViolations(agent.state.messages)).toEqual([]);
		});
	}
});
