import { describe, expect, it, vi } from "vitest";
import { subscribeReplies } from "../../src/reply/subscribe-replies.js";
import { extractToolError } from "../../src/reply/tool-descriptions.js";
import { defaultMessagingToolExtractor } from "../../src/reply/tool-tracker.js";
import type { ReplyPayload } from "../../src/reply/types.js";
import { FakeAgent, settle, toolResult, unclosedFences } from "./helpers.js";

describe("flush before tools", () => {
	it("calls onBlockReplyFlush before every tool start (B1)", async () => {
		const agent = new FakeAgent();
		const onBlockReplyFlush = vi.fn();
		subscribeReplies(agent, { onBlockReply: () => undefined, onBlockReplyFlush });
		agent.messageStart();
		agent.delta("First message before tool.");
		expect(onBlockReplyFlush).not.toHaveBeenCalled();
		agent.toolStart("bash", { command: "ls" });
		expect(onBlockReplyFlush).toHaveBeenCalledTimes(1);
		agent.toolStart("read", { path: "/tmp/a" });
		await settle();
		expect(onBlockReplyFlush).toHaveBeenCalledTimes(2);
	});

	it("sends buffered text below minChars before the tool (B2)", () => {
		const agent = new FakeAgent();
		const blocks: ReplyPayload[] = [];
		const onBlockReplyFlush = vi.fn();
		subscribeReplies(agent, {
			blockReplyChunking: { minChars: 50, maxChars: 200 },
			onBlockReply: (payload) => void blocks.push(payload),
			onBlockReplyFlush,
		});
		agent.messageStart();
		agent.delta("Short chunk.");
		expect(blocks).toEqual([]);
		agent.toolStart("bash", { command: "ls" });
		expect(blocks).toEqual([{ text: "Short chunk." }]);
		expect(onBlockReplyFlush).toHaveBeenCalledTimes(1);
	});

	it("waits for async block replies before the channel flush, and holds the agent back (B3, AA3)", async () => {
		const agent = new FakeAgent();
		const delivered: string[] = [];
		const snapshots: string[][] = [];
		const replies = subscribeReplies(agent, {
			blockReplyChunking: { minChars: 50, maxChars: 200 },
			onBlockReply: async (payload) => {
				await new Promise((resolve) => setTimeout(resolve, 5));
				delivered.push(payload.text ?? "");
			},
			onBlockReplyFlush: () => void snapshots.push([...delivered]),
		});
		agent.messageStart();
		agent.delta("Short chunk.");
		const pending = agent.toolStart("exec", { command: "ls" });
		expect(pending).toBeInstanceOf(Promise);
		agent.toolEnd("exec", toolResult("ok"));
		expect(replies.toolMetas).toEqual([]);
		await pending;
		expect(delivered).toEqual(["Short chunk."]);
		expect(snapshots).toEqual([["Short chunk."]]);
		expect(replies.toolMetas).toEqual([{ toolName: "exec", meta: "ls" }]);
	});

	it("flushes at message_end in message_end mode (B4, B5)", async () => {
		const agent = new FakeAgent();
		const delivered: string[] = [];
		const snapshots: string[][] = [];
		subscribeReplies(agent, {
			blockReplyBreak: "message_end",
			onBlockReply: async (payload) => {
				await Promise.resolve();
				delivered.push(payload.text ?? "");
			},
			onBlockReplyFlush: () => void snapshots.push([...delivered]),
		});
		agent.messageStart();
		agent.delta("Final reply before lifecycle end.");
		expect(snapshots).toEqual([]);
		await agent.messageEnd("Final reply before lifecycle end.");
		expect(snapshots).toEqual([["Final reply before lifecycle end."]]);
	});

	it("does not need onBlockReplyFlush (D1)", () => {
		const agent = new FakeAgent();
		subscribeReplies(agent, { onBlockReply: () => undefined });
		expect(() => agent.toolStart("bash", { command: "ls" })).not.toThrow();
	});
});

describe("last tool error", () => {
	it("keeps a failed write as the error after an unrelated success (A18)", () => {
		const agent = new FakeAgent();
		const replies = subscribeReplies(agent);
		agent.toolStart("write", { path: "/tmp/demo.txt" }, "w1");
		agent.toolEnd("write", toolResult("disk full"), true, "w1");
		agent.toolStart("read", { path: "/tmp/demo.txt" }, "r1");
		agent.toolEnd("read", toolResult("data"), false, "r1");
		expect(replies.getLastToolError()).toMatchObject({ toolName: "write", error: "disk full", mutatingAction: true });
	});

	it("clears it when the same write succeeds (A19)", () => {
		const agent = new FakeAgent();
		const replies = subscribeReplies(agent);
		agent.toolStart("write", { path: "/tmp/demo.txt" }, "w1");
		agent.toolEnd("write", toolResult("disk full"), true, "w1");
		agent.toolStart("write", { path: "/tmp/demo.txt" }, "w2");
		agent.toolEnd("write", toolResult("ok"), false, "w2");
		expect(replies.getLastToolError()).toBeUndefined();
	});

	it("keeps it when a different write succeeds (A20)", () => {
		const agent = new FakeAgent();
		const replies = subscribeReplies(agent);
		agent.toolStart("write", { path: "/tmp/a.txt" }, "w1");
		agent.toolEnd("write", toolResult("disk full"), true, "w1");
		agent.toolStart("write", { path: "/tmp/b.txt" }, "w2");
		agent.toolEnd("write", toolResult("ok"), false, "w2");
		expect(replies.getLastToolError()?.toolName).toBe("write");
	});

	it("keeps a failed model change after a read-only status call (A21)", () => {
		const agent = new FakeAgent();
		const replies = subscribeReplies(agent);
		agent.toolStart("session_status", { model: "x" }, "s1");
		agent.toolEnd("session_status", toolResult("unknown model"), true, "s1");
		agent.toolStart("session_status", {}, "s2");
		agent.toolEnd("session_status", toolResult("status"), false, "s2");
		expect(replies.getLastToolError()?.toolName).toBe("session_status");
	});

	it("matches the same edit through argument aliases (AA6, AA10)", () => {
		const agent = new FakeAgent();
		const replies = subscribeReplies(agent);
		agent.toolStart("edit", { file_path: "/a.ts", old_string: "x" }, "e1");
		agent.toolEnd("edit", toolResult("no match"), true, "e1");
		agent.toolStart("edit", { file: "/a.ts", oldText: "x" }, "e2");
		agent.toolEnd("edit", toolResult("ok"), false, "e2");
		expect(replies.getLastToolError()).toBeUndefined();
	});

	it("reports a timeout (AA11)", () => {
		const agent = new FakeAgent();
		const replies = subscribeReplies(agent);
		agent.toolStart("exec", { command: "sleep 99" }, "x1");
		agent.toolEnd("exec", { content: [], details: { timedOut: true } }, true, "x1");
		expect(replies.getLastToolError()).toMatchObject({ toolName: "exec", timedOut: true });
	});

	it("reads failure statuses from details (AE1, AE2)", () => {
		for (const status of ["0", "completed", "ok"]) expect(extractToolError({ details: { status } }, false)).toBeUndefined();
		expect(extractToolError({ details: { status: "failed" } }, false)).toBe("failed");
		expect(extractToolError({ details: { status: "timeout" } }, false)).toBe("timeout");
	});
});

describe("tool summaries and outputs", () => {
	it("summarises a canvas call (J1)", () => {
		const agent = new FakeAgent();
		const results: ReplyPayload[] = [];
		subscribeReplies(agent, { verbose: "on", onToolResult: (payload) => void results.push(payload) });
		agent.toolStart("canvas", { action: "a2ui_push", jsonlPath: "/tmp/a2ui.jsonl" });
		expect(results).toHaveLength(1);
		for (const part of ["🖼️", "Canvas", "/tmp/a2ui.jsonl"]) expect(results[0]?.text).toContain(part);
	});

	it("gives a tool named as a property every object has the plain emoji (it showed Object's function source)", () => {
		const agent = new FakeAgent();
		const results: ReplyPayload[] = [];
		subscribeReplies(agent, { verbose: "on", onToolResult: (payload) => void results.push(payload) });
		agent.toolStart("constructor", { path: "/tmp/a.txt" });
		agent.toolStart("toString", { path: "/tmp/b.txt" });
		expect(results.map((result) => result.text)).toEqual(["🧩 Constructor: `/tmp/a.txt`", "🧩 ToString: `/tmp/b.txt`"]);
	});

	it("respects shouldEmitToolResult over verbose (J2, J3)", () => {
		const agent = new FakeAgent();
		const off = vi.fn();
		subscribeReplies(agent, { verbose: "on", shouldEmitToolResult: () => false, onToolResult: off });
		const on = vi.fn();
		subscribeReplies(agent, { verbose: "off", shouldEmitToolResult: () => true, onToolResult: on });
		agent.toolStart("read", { path: "/tmp/a.txt" });
		expect(off).not.toHaveBeenCalled();
		expect(on).toHaveBeenCalledTimes(1);
	});

	it("summarises once per call and not again at its end (R6)", async () => {
		const agent = new FakeAgent();
		const results: ReplyPayload[] = [];
		subscribeReplies(agent, { verbose: "on", onToolResult: (payload) => void results.push(payload) });
		agent.toolStart("read", { path: "/tmp/a.txt" });
		agent.toolEnd("read", toolResult("data"));
		await settle();
		expect(results).toHaveLength(1);
		expect(results[0]?.text).toContain("/tmp/a.txt");
	});

	it("summarises a browser call with its URL (R7)", () => {
		const agent = new FakeAgent();
		const results: ReplyPayload[] = [];
		subscribeReplies(agent, { verbose: "on", onToolResult: (payload) => void results.push(payload) });
		agent.toolStart("browser", { action: "snapshot", targetUrl: "https://example.com" });
		for (const part of ["🌐", "Browser", "https://example.com"]) expect(results[0]?.text).toContain(part);
	});

	it("sends outputs in full verbosity, also for a call it never saw start (R8)", async () => {
		const agent = new FakeAgent();
		const results: ReplyPayload[] = [];
		subscribeReplies(agent, { verbose: "full", onToolResult: (payload) => void results.push(payload) });
		agent.toolStart("exec", { command: "claude", pty: true });
		agent.toolEnd("exec", toolResult("hello\nworld"));
		agent.toolEnd("read", toolResult("file data"), false, "orphan");
		await settle();
		expect(results[0]?.text).toContain("Exec");
		expect(results[0]?.text).toContain("pty");
		expect(results[1]?.text).toContain("hello");
		expect(results[1]?.text).toContain("```txt");
		expect(results[2]?.text).toContain("file data");
	});

	it("fences an output longer than any backtick run in it, so a line of the output cannot close it early", async () => {
		const agent = new FakeAgent();
		const results: ReplyPayload[] = [];
		subscribeReplies(agent, { verbose: "full", onToolResult: (payload) => void results.push(payload) });
		const output = "# README\n\n````md\n```js\nx\n```\n````";
		agent.toolEnd("read", toolResult(output));
		await settle();
		const text = results[0]?.text ?? "";
		expect(text).toContain(`\`\`\`\`\`txt\n${output}\n\`\`\`\`\``);
		expect(unclosedFences(text)).toEqual([]);
	});

	it("delivers tool results in order even when the first delivery is slower, and survives a failing one (AR3, AR4)", async () => {
		const agent = new FakeAgent();
		const delivered: string[] = [];
		let calls = 0;
		subscribeReplies(agent, {
			verbose: "on",
			onToolResult: async (payload) => {
				calls += 1;
				if (calls === 1) {
					await new Promise((resolve) => setTimeout(resolve, 10));
					throw new Error("first delivery failed");
				}
				delivered.push(payload.text ?? "");
			},
		});
		agent.toolStart("read", { path: "/a" }, "1");
		agent.toolStart("read", { path: "/b" }, "2");
		agent.toolStart("read", { path: "/c" }, "3");
		await new Promise((resolve) => setTimeout(resolve, 30));
		expect(delivered.map((text) => text.includes("/b"))).toEqual([true, false]);
		expect(delivered[1]).toContain("/c");
	});
});

describe("messaging-tool dedupe", () => {
	it("does not repeat what a successful message send already said (Q1)", () => {
		const agent = new FakeAgent();
		const blocks: ReplyPayload[] = [];
		const replies = subscribeReplies(agent, { blockReplyBreak: "message_end", onBlockReply: (payload) => void blocks.push(payload) });
		agent.toolStart("message", { action: "send", to: "+1555", message: "This is the answer." });
		agent.toolEnd("message", toolResult("ok"));
		agent.messageStart();
		agent.messageEnd("This is the answer.");
		expect(blocks).toEqual([]);
		expect(replies.didSendViaMessagingTool()).toBe(true);
		expect(replies.getMessagingToolSentTexts()).toEqual(["This is the answer."]);
		expect(replies.getMessagingToolSentTargets()).toEqual([{ tool: "message", to: "+1555" }]);
	});

	it("still answers when the send failed (Q2)", () => {
		const agent = new FakeAgent();
		const blocks: ReplyPayload[] = [];
		const replies = subscribeReplies(agent, { blockReplyBreak: "message_end", onBlockReply: (payload) => void blocks.push(payload) });
		agent.toolStart("message", { action: "send", to: "+1555", message: "This is the answer." });
		agent.toolEnd("message", { content: [], details: { status: "error" } });
		agent.messageStart();
		agent.messageEnd("This is the answer.");
		expect(blocks).toEqual([{ text: "This is the answer." }]);
		expect(replies.didSendViaMessagingTool()).toBe(false);
	});

	it("treats configured tool names as messaging tools", () => {
		const agent = new FakeAgent();
		const blocks: ReplyPayload[] = [];
		subscribeReplies(agent, { messagingTools: ["slack_post"], onBlockReply: (payload) => void blocks.push(payload) });
		agent.toolStart("slack_post", { channel: "C1", text: "Deploy finished successfully" });
		agent.toolEnd("slack_post", toolResult("ok"));
		agent.messageStart();
		agent.delta("Deploy finished successfully");
		agent.bareTextEnd();
		expect(blocks).toEqual([]);
	});

	it("recognises sends and the target alias (AD1, AD3)", () => {
		expect(defaultMessagingToolExtractor("message", { action: "send", channel: "telegram", to: "123", message: "hi" })).toEqual({
			text: "hi",
			target: { tool: "message", provider: "telegram", to: "123" },
		});
		expect(defaultMessagingToolExtractor("message", { action: "send", target: "123" })?.target?.to).toBe("123");
		expect(defaultMessagingToolExtractor("message", { provider: "slack", channel: "telegram", to: "C1" })?.target?.provider).toBe("slack");
		expect(defaultMessagingToolExtractor("message", { action: "list" })).toBeUndefined();
	});
});

describe("callback failures", () => {
	it("never lets a rejecting onBlockReply escape (S1, S2)", async () => {
		const errors: unknown[] = [];
		const unhandled = vi.fn();
		process.on("unhandledRejection", unhandled);
		for (const mode of ["text_end", "message_end"] as const) {
			const agent = new FakeAgent();
			const onBlockReply = vi.fn(() => Promise.reject(new Error("boom")));
			subscribeReplies(agent, { blockReplyBreak: mode, onBlockReply, onCallbackError: (error) => void errors.push(error) });
			agent.messageStart();
			agent.delta("Hello");
			agent.bareTextEnd();
			agent.messageEnd("Hello");
			expect(onBlockReply).toHaveBeenCalledTimes(1);
		}
		await settle();
		process.off("unhandledRejection", unhandled);
		expect(unhandled).not.toHaveBeenCalled();
		expect(errors).toHaveLength(2);
	});
});

// Models sometimes give two calls of one reply the same id; each is a call of its own (it runs
// and is answered). The events carry only the id, so the calls are paired with their ends by
// tool name, then in the order they started.
describe("two tool calls with one id", () => {
	it("summarises each, and shows each output with its own arguments (different tools, ended in reverse)", async () => {
		const agent = new FakeAgent();
		const results: ReplyPayload[] = [];
		subscribeReplies(agent, { verbose: "full", onToolResult: (payload) => void results.push(payload) });
		agent.toolStart("read", { path: "/tmp/a.txt" }, "dup");
		agent.toolStart("write", { path: "/tmp/b.txt", content: "x" }, "dup");
		agent.toolEnd("write", toolResult("wrote b"), false, "dup");
		agent.toolEnd("read", toolResult("contents of a"), false, "dup");
		await settle();
		const texts = results.map((payload) => payload.text ?? "");
		expect(texts).toHaveLength(4);
		expect(texts[0]).toContain("/tmp/a.txt");
		expect(texts[1]).toContain("/tmp/b.txt");
		expect(texts[2]).toContain("/tmp/b.txt");
		expect(texts[2]).toContain("wrote b");
		expect(texts[3]).toContain("/tmp/a.txt");
		expect(texts[3]).toContain("contents of a");
	});

	it("pairs calls of one tool with their ends in the order they started (as sequential mode ends them)", async () => {
		const agent = new FakeAgent();
		const results: ReplyPayload[] = [];
		subscribeReplies(agent, { verbose: "full", onToolResult: (payload) => void results.push(payload) });
		agent.toolStart("read", { path: "/tmp/a.txt" }, "dup");
		agent.toolEnd("read", toolResult("contents of a"), false, "dup");
		agent.toolStart("read", { path: "/tmp/b.txt" }, "dup");
		agent.toolEnd("read", toolResult("contents of b"), false, "dup");
		agent.toolStart("read", { path: "/tmp/c.txt" }, "dup");
		agent.toolStart("read", { path: "/tmp/d.txt" }, "dup");
		agent.toolEnd("read", toolResult("contents of c"), false, "dup");
		agent.toolEnd("read", toolResult("contents of d"), false, "dup");
		await settle();
		const outputs = results.map((payload) => payload.text ?? "").filter((text) => text.includes("contents of"));
		expect(outputs).toHaveLength(4);
		for (const [index, name] of ["a", "b", "c", "d"].entries()) {
			expect(outputs[index]).toContain(`/tmp/${name}.txt`);
			expect(outputs[index]).toContain(`contents of ${name}`);
		}
	});

	it("commits what each messaging call sent by its own outcome", async () => {
		const agent = new FakeAgent();
		const replies = subscribeReplies(agent, {});
		agent.toolStart("message", { action: "send", message: "first attempt" }, "dup");
		agent.toolStart("message", { action: "send", message: "second attempt" }, "dup");
		agent.toolEnd("message", toolResult("failed"), true, "dup");
		agent.toolEnd("message", toolResult("sent"), false, "dup");
		await settle();
		expect(replies.getMessagingToolSentTexts()).toEqual(["second attempt"]);
	});
});
