/**
 * The crash test in the suite: real processes on the built package, killed with SIGKILL at random
 * points (mid-stream, mid-tool, between a tool's intent and its result, while a person is asked,
 * in the middle of a store write, with a torn last write, while a manual compaction runs),
 * restarted until each session ends;
 * then the crash rules are checked on what was stored. `npm run crash -- --kills 500 --seed N`
 * runs the long version; CRASH_KILLS and CRASH_SEED change this one.
 */
import { describe, expect, it } from "vitest";
import type { AgentMessage, AssistantMessage, ToolResultMessage } from "../../src/types/messages.js";
import { checkSession, runCrashTest } from "./crash/crash-run.js";
import { expandSummaries } from "./crash/summaries.js";

const usage = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
const user = (text: string): AgentMessage => ({ role: "user", content: text, timestamp: 0 });
const asks = (...calls: Array<[id: string, name: string]>): AssistantMessage => ({
	role: "assistant",
	content: calls.map(([id, name]) => ({ type: "toolCall", id, name, arguments: {} })),
	api: "scripted",
	provider: "scripted",
	model: "scripted",
	usage,
	stopReason: "toolUse",
	timestamp: 0,
});
const answer = (id: string, name: string, text: string): ToolResultMessage => ({ role: "toolResult", toolCallId: id, toolName: name, content: [{ type: "text", text }], isError: false, timestamp: 0 });
const done: AssistantMessage = { ...asks(), content: [{ type: "text", text: "done" }], stopReason: "stop" };

describe("the crash rules checker", () => {
	// The checker is what makes the crash test able to fail: each rule is shown to catch its breach.
	const session = (...middle: AgentMessage[]): AgentMessage[] => [user("task 0"), ...middle, done, user("follow-up 0"), done];

	it("accepts a session that keeps every rule", () => {
		const messages = session(asks(["c1", "charge"], ["c2", "deploy"]), answer("c1", "charge", "charge done"), answer("c2", "deploy", "deploy done"));
		expect(checkSession(messages, ["exec 0 c1", "choose c2 approve", "decide c2 approve", "exec 0 c2"], 1, "s")).toEqual([]);
	});

	it.each([
		["an unsafe tool run twice", session(asks(["c1", "charge"]), answer("c1", "charge", "charge done")), ["exec 0 c1", "exec 1 c1"], /not replay-safe\) ran 2 times/],
		["a tool run for a call the transcript lost", session(), ["exec 0 c9"], /does not have \(an effect lost\)/],
		["a lost follow-up", [user("task 0"), done], [], /user messages/],
		["a call answered out of order", session(asks(["c1", "lookup"], ["c2", "lookup"]), answer("c2", "lookup", "lookup done"), answer("c1", "lookup", "lookup done")), ["exec 0 c1", "exec 0 c2"], /not answered right after it/],
		["a rejected call that ran", session(asks(["c2", "deploy"]), answer("c2", "deploy", "deploy done")), ["choose c2 reject", "decide c2 reject", "exec 0 c2"], /was rejected \(stored\), yet it ran/],
		["a call that ran before its approval", session(asks(["c2", "deploy"]), answer("c2", "deploy", "deploy done")), ["exec 0 c2", "choose c2 approve"], /ran without an approval before it/],
		["a person asked about a lost call", session(), ["requested c7"], /a person was asked about call c7/],
		["a failed reply kept", session({ ...done, stopReason: "error", errorMessage: "boom" }), [], /failed reply/],
	])("reports %s", (_name, messages, side, rule) => {
		expect(checkSession(messages, side, 1, "s").join("\n")).toMatch(rule);
	});
});

describe("the crash test's compaction summaries", () => {
	const summary = (messages: AgentMessage[], previous?: string): AgentMessage => ({ role: "compactionSummary", summary: JSON.stringify({ previous, messages, turnPrefix: [] }), tokensBefore: 0, messagesDropped: messages.length, timestamp: 0 }) as unknown as AgentMessage;
	const first = [user("task 0"), done];
	const second = [user("follow-up 0"), done];

	it("put back what they summarised, an earlier summary inside a later one, so the whole session is checked", () => {
		const inner = (summary(first) as unknown as { summary: string }).summary;
		const compacted = [summary(second, inner), user("task 1"), done, user("follow-up 1"), done];
		const whole = expandSummaries(compacted);
		expect(whole).toEqual([...first, ...second, user("task 1"), done, user("follow-up 1"), done]);
		expect(checkSession(whole, [], 2, "s")).toEqual([]);
	});

	it("let the checker see a message a compaction lost", () => {
		const compacted = [summary([user("task 0")]), user("task 1"), done, user("follow-up 1"), done];
		expect(checkSession(expandSummaries(compacted), [], 2, "s").join("\n")).toMatch(/user messages/);
	});
});

describe("crash test", () => {
	const kills = Number(process.env["CRASH_KILLS"] ?? 30);
	const seed = Number(process.env["CRASH_SEED"] ?? 11);

	it(`${kills} kills (seed ${seed}): every session completes and keeps the crash rules`, async () => {
		const report = await runCrashTest({ kills, seed });
		expect(report.violations, `repeat with: npm run crash -- --kills ${kills} --seed ${seed}`).toEqual([]);
		expect(report.kills).toBeGreaterThanOrEqual(kills);
		expect(report.sessions).toBeGreaterThan(0);
		// The kills must reach the places the rules are about, or the run proves little.
		expect(report.landed["mid-tool"]).toBeGreaterThan(0);
		expect(report.landed["streaming"]).toBeGreaterThan(0);
		// A process that lost its session while it lives must find out and stop by itself (with a person who does not answer).
		expect(report.landed["left to stop by itself"]).toBeGreaterThan(0);
	}, 20 * 60_000);
});
