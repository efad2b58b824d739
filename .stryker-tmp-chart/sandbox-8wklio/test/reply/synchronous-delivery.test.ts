/**
 * Chat integrations written against OpenClaw assume that synchronous callbacks are called
 * synchronously: the flush before a tool, the tool's summary and its output all happen inside
 * the event that causes them. Only a callback that returns a promise makes later work wait.
 */
// @ts-nocheck

import { describe, expect, it } from "vitest";
import { subscribeReplies } from "../../src/reply/subscribe-replies.js";
import type { ReplyPayload } from "../../src/reply/types.js";
import { FakeAgent, settle, toolResult } from "./helpers.js";

function firstLine(payload: ReplyPayload): string {
	return (payload.text ?? "").split("\n")[0] ?? "";
}

describe("with synchronous callbacks", () => {
	it("delivers narration, flush, tool summary and tool output inside the events that cause them", () => {
		const agent = new FakeAgent();
		const log: string[] = [];
		subscribeReplies(agent, {
			verbose: "full",
			onBlockReply: (payload) => void log.push(`block:${payload.text}`),
			onBlockReplyFlush: () => void log.push("flush"),
			onToolResult: (payload) => void log.push(`tool:${firstLine(payload)}`),
		});
		const returned = [
			agent.messageStart(),
			agent.delta("Narration."),
			agent.toolStart("read", { path: "/a" }, "r1"),
		];
		expect(log).toEqual(["block:Narration.", "flush", "tool:📖 Read: `/a`"]);
		returned.push(agent.toolEnd("read", toolResult("data"), false, "r1"));
		expect(log).toEqual(["block:Narration.", "flush", "tool:📖 Read: `/a`", "tool:📖 Read: `/a`"]);
		returned.push(agent.messageStart(), agent.delta("After."), agent.bareTextEnd(), agent.agentEnd());
		expect(log.slice(4)).toEqual(["block:After.", "flush"]);
		// Nothing was returned for the agent to wait on: no microtask between events.
		expect(returned.every((value) => value === undefined)).toBe(true);
	});

	it("flushes synchronously at message_end in message_end mode", () => {
		const agent = new FakeAgent();
		const log: string[] = [];
		subscribeReplies(agent, {
			blockReplyBreak: "message_end",
			onBlockReply: (payload) => void log.push(`block:${payload.text}`),
			onBlockReplyFlush: () => void log.push("flush"),
		});
		agent.messageStart();
		agent.delta("Answer.");
		const returned = agent.messageEnd();
		expect(log).toEqual(["block:Answer.", "flush"]);
		expect(returned).toBeUndefined();
	});

	it("reports a synchronous throw and goes on synchronously", () => {
		const agent = new FakeAgent();
		const log: string[] = [];
		subscribeReplies(agent, {
			verbose: "on",
			onBlockReply: () => undefined,
			onBlockReplyFlush: () => {
				throw new Error("flush failed");
			},
			onToolResult: (payload) => void log.push(firstLine(payload)),
			onCallbackError: (_error, callback) => void log.push(`error:${callback}`),
		});
		const returned = agent.toolStart("read", { path: "/a" });
		expect(log).toEqual(["error:onBlockReplyFlush", "📖 Read: `/a`"]);
		expect(returned).toBeUndefined();
	});
});

describe("with callbacks that return promises", () => {
	it("starts the first tool delivery at once and keeps later ones in order behind it", async () => {
		const agent = new FakeAgent();
		const log: string[] = [];
		subscribeReplies(agent, {
			verbose: "on",
			onToolResult: async (payload) => {
				log.push(`start ${firstLine(payload)}`);
				await new Promise((resolve) => setTimeout(resolve, 5));
				log.push(`end ${firstLine(payload)}`);
			},
		});
		agent.toolStart("read", { path: "/a" }, "1");
		agent.toolStart("read", { path: "/b" }, "2");
		expect(log).toEqual(["start 📖 Read: `/a`"]);
		await settle(10);
		expect(log).toEqual(["start 📖 Read: `/a`", "end 📖 Read: `/a`", "start 📖 Read: `/b`", "end 📖 Read: `/b`"]);
	});

	it("goes back to synchronous delivery once a slow flush has settled", async () => {
		const agent = new FakeAgent();
		const log: string[] = [];
		let slow = true;
		subscribeReplies(agent, {
			verbose: "on",
			onBlockReply: () => undefined,
			onBlockReplyFlush: () => (slow ? new Promise<void>((resolve) => setTimeout(resolve, 5)) : undefined),
			onToolResult: (payload) => void log.push(firstLine(payload)),
		});
		const pending = agent.toolStart("read", { path: "/a" }, "1");
		expect(pending).toBeInstanceOf(Promise);
		expect(log).toEqual([]);
		await pending;
		expect(log).toEqual(["📖 Read: `/a`"]);
		slow = false;
		await settle();
		expect(agent.toolStart("read", { path: "/b" }, "2")).toBeUndefined();
		expect(log).toEqual(["📖 Read: `/a`", "📖 Read: `/b`"]);
	});
});
