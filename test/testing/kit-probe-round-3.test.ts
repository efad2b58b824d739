/**
 * What an outside probe of the kit found on 2026-12-06, each held here (each failing before its
 * fix): a correct streaming agent blamed for a replay it never made; the checker throwing on a
 * tool result a listener broke instead of reporting it; a factory that restored a trimmed
 * snapshot mid-run passing; a `needsApproval` rule or a `summarize` with a mistake passing (the
 * engine fails closed on both); `calls` whose arguments the tool refuses testing nothing; a hang
 * in `transformContext` blamed on the model; a `check` that throws or returns nothing; one
 * recording's `stop()` ending another's.
 */
import { Type } from "typebox";
import { describe, expect, it } from "vitest";
import { Agent, type AgentOptions } from "../../src/agent.js";
import { createScriptedModel, toolCall } from "../../src/providers/scripted.js";
import { checkAgentInvariants, recordAgent } from "../../src/testing/agent-checks.js";
import { exploreAgent } from "../../src/testing/explore.js";
import { fuzzAgent } from "../../src/testing/fuzz.js";
import type { AgentFactory } from "../../src/testing/walk/cast.js";
import type { AgentEvent, AgentTool } from "../../src/types/agent.js";
import type { AgentMessage } from "../../src/types/messages.js";
import { factory, lookup, ok, quiet } from "./user-agent.js";

const model = createScriptedModel([]).model;
const refundParams = Type.Object({ id: Type.String(), amount: Type.Number() });
const refund = (needsApproval: AgentTool<typeof refundParams>["needsApproval"]): AgentTool<typeof refundParams> => ({
	name: "refund",
	label: "Refund",
	description: "Refunds an order.",
	parameters: refundParams,
	needsApproval,
	execute: async () => ok("refunded"),
});

describe("a correct agent is not blamed", () => {
	it("for a replay it never made: streaming, a beforeToolCall that allows all, restores everywhere", async () => {
		// The call was "running" in the chart while its beforeToolCall was asked; restored there it
		// had not run, and the restored agent ran it once. The kit counted it as run before.
		const streaming = factory(() => ({ initialState: { model, systemPrompt: "s", tools: [lookup(), refund(true)] }, toolExecution: "streaming", streamIdleTimeoutMs: 200, beforeToolCall: async () => undefined }));
		const path = "prompt → agentchart.testing.restore → stream.start → stream.toolcall(a1_1:0) → delivered → stream.done(tools1:0) → agentchart.testing.restore";
		const report = await exploreAgent(streaming, { path, restores: "everywhere", shrink: false });
		expect(report.violations, report.format()).toEqual([]);
	}, 120_000);
});

describe("the checker reports what your code broke, rather than throwing", () => {
	const breaksResults = (event: AgentEvent) => {
		if (event.type === "message_end" && event.message.role === "toolResult") (event.message as unknown as { content: unknown }).content = "oops";
	};

	it("checkAgentInvariants, a listener that replaced a tool result's content with text", async () => {
		const scripted = createScriptedModel([{ content: [toolCall("lookup_order", { id: "1" })] }, { content: "done" }]);
		const agent = new Agent({ initialState: { model: scripted.model, tools: [lookup()] }, streamFn: scripted.streamFn });
		const events: AgentEvent[] = [];
		agent.subscribe(breaksResults);
		agent.subscribe((event) => void events.push(event));
		await agent.prompt("hi");
		const found = checkAgentInvariants(events, agent);
		expect(found.map((each) => each.rule)).toContain("provider-request");
		expect(found.map((each) => each.message).join("\n")).toMatch(/its content is not a list of content blocks, got "oops"/);
	});

	it("exploreAgent, the same listener", async () => {
		const report = await exploreAgent(factory(() => ({ initialState: { model, tools: [lookup()] }, listeners: [breaksResults] })), { restores: false, shrink: false });
		expect(report.ok).toBe(false);
		expect(report.violations.map((each) => each.rule)).toContain("provider-request");
	}, 120_000);
});

describe("a factory that restores a trimmed snapshot mid-run", () => {
	it("is refused as not restoring it", async () => {
		const trims: AgentFactory = (kit) => {
			const options = kit.options({ initialState: { model, tools: [lookup()] } });
			if (!kit.snapshot) return new Agent(options);
			const copy = JSON.parse(JSON.stringify(kit.snapshot)) as typeof kit.snapshot & { machine: { context: { messages: AgentMessage[] } } };
			copy.machine.context.messages = [];
			return Agent.restore(copy, options);
		};
		// Restores are walked mid-run first (the idle ones were refused before the fix too).
		await expect(exploreAgent(trims, { shrink: false })).rejects.toThrow(/was given kit\.snapshot but did not restore it/);
	}, 120_000);
});

describe("mistakes the engine fails closed on are reported", () => {
	const approvalRules: [string, AgentTool<typeof refundParams>["needsApproval"], string, RegExp][] = [
		["a rule that throws", ((args: { customer?: { tier: string } }) => (args.customer as { tier: string }).tier !== "gold") as never, "hook-threw", /needsApproval on its 1st call .* threw: .*tier/],
		["a rule written async", (async (args: { amount: number }) => args.amount > 100) as never, "hook-contract", /needsApproval on its 1st call .* returned a promise \(is it async\?\)/],
	];
	for (const [what, rule, ruleName, message] of approvalRules) {
		it(`needsApproval: ${what} (exploreAgent and fuzzAgent)`, async () => {
			const agent = factory(() => ({ initialState: { model, tools: [refund(rule)] } }));
			const explored = await exploreAgent(agent, { restores: false, shrink: false });
			expect(explored.violations.map((each) => each.rule), explored.format()).toContain(ruleName);
			expect(explored.violations.map((each) => each.message).join("\n")).toMatch(message);
			const fuzzed = await fuzzAgent(agent, { runs: 20, seed: 1, ...quiet });
			expect(fuzzed.violations.map((each) => each.rule), fuzzed.format()).toContain(ruleName);
		}, 240_000);
	}

	const summaries: [string, () => Promise<unknown>, string][] = [
		["throws", async () => (undefined as unknown as string[]).length, "hook-threw"],
		["answers a number", async () => 42, "hook-contract"],
	];
	for (const [what, summarize, ruleName] of summaries) {
		it(`compaction's summarize ${what}`, async () => {
			const compaction = { enabled: true, reserveTokens: 100, keepRecentTokens: 10, summarize: summarize as never } satisfies AgentOptions["compaction"];
			const agent = factory(() => ({ initialState: { model, tools: [lookup()] }, compaction }));
			const explored = await exploreAgent(agent, { restores: false, shrink: false });
			expect(explored.violations.map((each) => each.rule), explored.format()).toContain(ruleName);
			expect(explored.violations.map((each) => each.message).join("\n")).toMatch(/compaction\.summarize/);
		}, 240_000);
	}
});

describe("options that would test nothing", () => {
	it("calls whose arguments the tool refuses are refused, naming the call and the tool's reason", async () => {
		const agent = factory(() => ({ initialState: { model, tools: [lookup()] } }));
		await expect(exploreAgent(agent, { calls: [{ name: "lookup_order" } as never] })).rejects.toThrow(/calls\[0\] \("lookup_order"\) has arguments the tool refuses, so it would never run[\s\S]*id/);
		await expect(fuzzAgent(agent, { calls: [{ name: "lookup_order", arguments: { order: "A-17" } }], runs: 5, ...quiet })).rejects.toThrow(/calls\[0\] \("lookup_order"\) has arguments the tool refuses/);
	});

	it("a check that throws, or returns no list, is a custom violation", async () => {
		const agent = factory(() => ({ initialState: { model, tools: [lookup()] } }));
		const throwing = await exploreAgent(agent, {
			restores: false,
			maxPaths: 1,
			check: () => {
				throw new Error("too many messages");
			},
		});
		expect(throwing.violations.map((each) => `${each.rule}: ${each.message}`)).toContain("custom: your check threw: too many messages");
		const forgot = await exploreAgent(agent, { restores: false, maxPaths: 1, check: (() => undefined) as never });
		expect(forgot.violations.map((each) => each.message).join("\n")).toMatch(/your check returned undefined \(did it forget to return its list\?\)/);
	}, 120_000);
});

describe("a hang is blamed on what hangs", () => {
	it("a transformContext that never answers is named, not the model", async () => {
		const report = await fuzzAgent((kit) => new Agent(kit.options({ initialState: { model }, transformContext: () => new Promise<AgentMessage[]>(() => {}) })), {
			settleTimeoutMs: 300,
			scenario: { replies: [{ calls: [] }], tools: [{ latencyMs: 0, fails: false }], commands: [] },
			...quiet,
		});
		expect(report.format()).toMatch(/the model's reply has not started: the model has not answered, or your transformContext \(run before the request\) has not/);
	}, 60_000);
});

describe("two recordings of one agent", () => {
	it("stopping one leaves the other recording what is queued", async () => {
		const scripted = createScriptedModel([{ content: "one" }, { content: "two" }, { content: "three" }]);
		const agent = new Agent({ initialState: { model: scripted.model }, streamFn: scripted.streamFn });
		const first = recordAgent(agent);
		const second = recordAgent(agent);
		await agent.prompt("hi");
		agent.followUp({ role: "user", content: "f1", timestamp: 1 });
		await agent.continue();
		first.stop();
		agent.followUp({ role: "user", content: "f2", timestamp: 2 });
		await agent.continue();
		expect(first.queued).toHaveLength(1);
		expect(second.queued).toHaveLength(2);
		expect(second.check()).toEqual([]);
		second.stop();
		// Both stopped: the class's methods show through again.
		expect(Object.hasOwn(agent, "followUp")).toBe(false);
		expect(Object.hasOwn(agent, "reset")).toBe(false);
	});
});
