/**
 * The loop API's time limits. `agentLoop` runs on the Agent's statechart, which times tool calls
 * out (180 s) and ends a silent model stream (120 s) by default; pi's loop has neither. The
 * config's `toolTimeoutMs`, `streamIdleTimeoutMs` and `toolAbortGraceMs` were spread into the
 * stream options (handed to the stream function, applied nowhere), so a loop-API user could
 * neither lift nor shorten them: a ten-minute build tool, or a local model reading a long prompt
 * for three minutes before its first token, failed with no way out.
 */
import { describe, expect, it } from "vitest";
import { runAgentLoop, type AgentLoopConfig } from "../../src/loop/agent-loop.js";
import { createScriptedModel, toolCall } from "../../src/providers/scripted.js";
import type { AgentMessage, ToolResultMessage } from "../../src/types/messages.js";
import type { StreamFn } from "../../src/types/stream.js";
import { makeTool, ok } from "../agent/helpers.js";

const prompt: AgentMessage = { role: "user", content: "go", timestamp: 1 };

/** A tool that answers after `ms`, or at once when its signal aborts. */
function slowTool(ms: number) {
	return makeTool(
		"build",
		(_id, _args, signal) =>
			new Promise((resolve) => {
				const timer = setTimeout(() => resolve(ok("built")), ms);
				signal?.addEventListener("abort", () => {
					clearTimeout(timer);
					resolve(ok("stopped"));
				});
			}),
	);
}

function toolResultText(messages: AgentMessage[]): string | undefined {
	const result = messages.find((message): message is ToolResultMessage => message.role === "toolResult");
	const block = result?.content[0];
	return block?.type === "text" ? block.text : undefined;
}

describe("pi's loop API with agentchart's time limits in its config", () => {
	it("applies toolTimeoutMs to the run's tool calls", async () => {
		const scripted = createScriptedModel([{ content: [toolCall("build", {}, "c1")] }, { content: "done" }]);
		const config: AgentLoopConfig = { model: scripted.model, convertToLlm: (messages) => messages, toolTimeoutMs: 50 };
		const messages = await runAgentLoop([prompt], { systemPrompt: "", messages: [], tools: [slowTool(5_000)] }, config, async () => {}, undefined, scripted.streamFn);
		expect(toolResultText(messages)).toBe('Tool "build" timed out after 50 ms');
	});

	it("applies streamIdleTimeoutMs to the model's stream", async () => {
		const scripted = createScriptedModel([{ content: "late" }], { firstEventDelayMs: 5_000 });
		const config: AgentLoopConfig = { model: scripted.model, convertToLlm: (messages) => messages, streamIdleTimeoutMs: 50 };
		const started = Date.now();
		const messages = await runAgentLoop([prompt], { systemPrompt: "", messages: [], tools: [] }, config, async () => {}, undefined, scripted.streamFn);
		const reply = messages.at(-1);
		expect(reply?.role === "assistant" ? reply.errorMessage : undefined).toMatch(/stalled/);
		expect(Date.now() - started).toBeLessThan(4_000);
	});

	it("does not hand them to the stream function as stream options", async () => {
		const scripted = createScriptedModel([{ content: "hi" }]);
		const seen: Record<string, unknown>[] = [];
		const streamFn: StreamFn = (model, context, options) => {
			seen.push({ ...options });
			return scripted.streamFn(model, context, options);
		};
		const config: AgentLoopConfig = { model: scripted.model, convertToLlm: (messages) => messages, toolTimeoutMs: 0, streamIdleTimeoutMs: 0, toolAbortGraceMs: 0, sessionId: "s1" };
		await runAgentLoop([prompt], { systemPrompt: "", messages: [], tools: [] }, config, async () => {}, undefined, streamFn);
		expect(seen).toHaveLength(1);
		expect(seen[0]).toMatchObject({ sessionId: "s1" });
		expect(Object.keys(seen[0] ?? {})).not.toEqual(expect.arrayContaining(["toolTimeoutMs"]));
		expect(Object.keys(seen[0] ?? {})).not.toEqual(expect.arrayContaining(["streamIdleTimeoutMs"]));
		expect(Object.keys(seen[0] ?? {})).not.toEqual(expect.arrayContaining(["toolAbortGraceMs"]));
	});

	it("rejects a value that is not a number of milliseconds with a TypeError naming it, before anything runs", async () => {
		const scripted = createScriptedModel([{ content: "hi" }]);
		const config = { model: scripted.model, convertToLlm: (messages: AgentMessage[]) => messages, toolTimeoutMs: "60s" } as unknown as AgentLoopConfig;
		const events: string[] = [];
		await expect(runAgentLoop([prompt], { systemPrompt: "", messages: [], tools: [] }, config, async (event) => void events.push(event.type), undefined, scripted.streamFn)).rejects.toThrow(
			/toolTimeoutMs must be a number of milliseconds, at least 0, got "60s"/,
		);
		expect(scripted.calls).toHaveLength(0);
	});
});
