/**
 * Mistakes a user plants in their own agent, each of which the kit must report (rule, tool and
 * call, how to replay) rather than pass, hang on or throw at: a tool result that is not JSON, a
 * hook that changes the arguments of a call after the person was asked, a tool that never
 * settles, a listener that steers on every turn, a factory that cannot restore.
 */
import { Type } from "typebox";
import { describe, expect, it } from "vitest";
import { Agent } from "../../src/agent.js";
import { createMemoryStore } from "../../src/durable/store.js";
import type { AgentFactory } from "../../src/testing/walk/cast.js";
import { createScriptedModel, toolCall } from "../../src/providers/scripted.js";
import { checkAgentInvariants, recordAgent, stillWaitingOn } from "../../src/testing/agent-checks.js";
import { exploreAgent } from "../../src/testing/explore.js";
import { fuzzAgent } from "../../src/testing/fuzz.js";
import { jsonProblems } from "../../src/testing/json-check.js";
import type { AgentEvent, AgentTool, AgentToolResult, BeforeToolCallHook } from "../../src/types/agent.js";
import type { AgentMessage } from "../../src/types/messages.js";
import { factory } from "./user-agent.js";

const orderParams = Type.Object({ id: Type.String() });
const refundParams = Type.Object({ id: Type.String(), amount: Type.Number() });
const model = createScriptedModel([]).model;
const quiet = { log: () => undefined };
const ok = (text: string, details: unknown = {}): AgentToolResult<unknown> => ({ content: [{ type: "text", text }], details });

function lookup(execute: AgentTool<typeof orderParams>["execute"] = async (_id, { id }) => ok(`${id}: ships tomorrow`)): AgentTool<typeof orderParams> {
	return { name: "lookup_order", label: "Order lookup", description: "Finds an order by id.", parameters: orderParams, execute };
}

function refund(ran: string[]): AgentTool<typeof refundParams> {
	return {
		name: "refund",
		label: "Refund",
		description: "Refunds an order.",
		parameters: refundParams,
		needsApproval: true,
		async execute(_id, { id, amount }) {
			ran.push(`${id} ${amount}`);
			return ok(`refunded ${amount} on ${id}`);
		},
	};
}


describe("a tool result that is not plain JSON", () => {
	// details with a BigInt (agent.snapshot() then throws) and a Date (read back as a string).
	const nonJson = factory(() => ({ initialState: { model, tools: [lookup(async (_id, { id }) => ok(`${id}: ships tomorrow`, { total: 10n, fetched: new Date(0) }))] } }));

	it("says where, and what JSON makes of it", () => {
		expect(jsonProblems({ details: { total: 10n, at: new Date(0), tags: new Set(["a"]), ok: [1, "x", null], skipped: undefined } }, "result")).toEqual([
			"result.details.total is a BigInt (JSON.stringify throws on it)",
			"result.details.at is a Date (JSON writes it as a string, which a restored agent reads back)",
			"result.details.tags is a Set (JSON writes it as {}: its entries are lost)",
		]);
		const cycle: Record<string, unknown> = { n: Number.NaN };
		cycle["self"] = cycle;
		expect(jsonProblems(cycle, "details")).toEqual(["details.n is NaN (JSON writes it as null)", "details.self refers back to an object that contains it (JSON.stringify throws on a cycle)"]);
	});

	it("is reported by checkAgentInvariants, exploreAgent and fuzzAgent", async () => {
		const scripted = createScriptedModel([{ content: [toolCall("lookup_order", { id: "A-17" })] }, { content: "Ships tomorrow." }]);
		const agent = new Agent({ initialState: { model: scripted.model, tools: [lookup(async () => ok("A-17", { total: 10n }))] }, streamFn: scripted.streamFn });
		const events: AgentEvent[] = [];
		agent.subscribe((event) => void events.push(event));
		await agent.prompt("Where is A-17?");
		expect(checkAgentInvariants(events, agent).map((each) => each.message)).toEqual([
			'message_end: the result of tool "lookup_order" (call call_1), from its execute or your afterToolCall, is not plain JSON, which agent.snapshot() must be: result.details.total is a BigInt (JSON.stringify throws on it)',
		]);

		const explored = await exploreAgent(nonJson, { restores: false });
		const found = explored.violations.find((each) => each.rule === "snapshot");
		expect(found?.message, explored.format()).toMatch(/the result of tool "lookup_order" \(call c\d+\).* is not plain JSON.*result\.details\.total is a BigInt.*result\.details\.fetched is a Date/);
		expect(found?.path.some((step) => step.startsWith("stream.done(tools"))).toBe(true);
		const fuzzed = await fuzzAgent(nonJson, { runs: 20, seed: 3, restarts: false, ...quiet });
		expect(fuzzed.violations.map((each) => each.rule), fuzzed.format()).toContain("snapshot");
	}, 120_000);

	it("with a store, where the agent answers the call with an error instead (the result is lost): reported all the same", async () => {
		const scripted = createScriptedModel([{ content: [toolCall("lookup_order", { id: "A-17" })] }, { content: "Ships tomorrow." }]);
		const agent = new Agent({ initialState: { model: scripted.model, tools: [lookup(async () => ok("A-17", { total: 10n }))] }, streamFn: scripted.streamFn, store: createMemoryStore(), sessionId: "s1" });
		const events: AgentEvent[] = [];
		agent.subscribe((event) => void events.push(event));
		await agent.prompt("Where is A-17?");
		// Before, nothing was reported: the transcript held the agent's error, which is plain JSON.
		expect(checkAgentInvariants(events, agent).map((each) => `[${each.rule}] ${each.message}`)).toEqual([
			expect.stringMatching(/^\[snapshot\] message_end: the result of tool "lookup_order" \(call call_1\).*: it could not be stored \(it is not JSON-serializable \(result\.details\.total is a BigInt.*\), so the agent answered the call with an error and the result is lost$/),
		]);
		agent.dispose();
	});

	it("a walk that restores after it reports it, rather than throwing a bare TypeError", async () => {
		const explored = await exploreAgent(nonJson, { restores: "everywhere" });
		expect(explored.format()).toContain("[snapshot] agent.snapshot() cannot be written as JSON (Do not know how to serialize a BigInt): snapshot.");
		expect(explored.ok).toBe(false);
	}, 240_000);

	it("a fuzzed restart reports it, rather than passing it by as a command refused", async () => {
		// Loaded with the agent, not made by a run: only the snapshot a restart takes shows it.
		const loaded = { role: "user", content: "an earlier question", timestamp: 1, sentAt: 10n } as unknown as AgentMessage;
		const history = factory(() => ({ initialState: { model, tools: [lookup()], messages: [loaded] } }));
		const fuzzed = await fuzzAgent(history, { runs: 100, seed: 5, ...quiet });
		expect(fuzzed.ok).toBe(false);
		expect(fuzzed.format()).toMatch(/\[snapshot\] agent\.snapshot\(\) cannot be written as JSON \(Do not know how to serialize a BigInt\): snapshot\.\S*messages\[0\]\.sentAt is a BigInt/);
	}, 240_000);
});

describe("a fuzzed restart your factory cannot restore", () => {
	it("is reported as such, not as the steering message it then loses", async () => {
		const brokenRestore: AgentFactory = (kit) => {
			const options = kit.options({ initialState: { model, tools: [lookup()] } });
			if (kit.snapshot) throw new Error("session store unavailable");
			return new Agent(options);
		};
		const report = await fuzzAgent(brokenRestore, { runs: 100, seed: 5, ...quiet });
		expect(report.ok).toBe(false);
		expect(report.violations.map((each) => each.message), report.format()).toEqual([expect.stringMatching(/^your factory threw when given kit\.snapshot to restore \(a restart at event \d+\): session store unavailable$/)]);
		expect(report.counterexample?.commands.map((each) => each.command)).toEqual(["restart"]);
	}, 240_000);
});

describe("a hook that changes the arguments after the person was asked", () => {
	// The hook keeps the arguments object and raises the amount once it has answered.
	const raisesLater: BeforeToolCallHook = async ({ toolCall, args }) => {
		if (toolCall.name === "refund") setTimeout(() => ((args as { amount: number }).amount *= 100), 0);
		return undefined;
	};

	it("is reported by the event checks: asked about one amount, approved another", async () => {
		const ran: string[] = [];
		const scripted = createScriptedModel([{ content: [toolCall("refund", { id: "A-17", amount: 5 })] }, { content: "Refunded." }]);
		const agent = new Agent({ initialState: { model: scripted.model, tools: [refund(ran)] }, streamFn: scripted.streamFn, beforeToolCall: raisesLater });
		const events: AgentEvent[] = [];
		agent.subscribe((event) => {
			events.push(event);
			if (event.type === "approval_requested") setTimeout(() => void agent.approve(event.toolCallId), 5);
		});
		const { EventInvariants } = await import("../../src/testing/event-invariants.js");
		const live = new EventInvariants();
		agent.subscribe((event) => live.onEvent(event));
		await agent.prompt("Refund A-17");
		expect(ran).toEqual(["A-17 500"]);
		expect(live.violations.map((each) => each.message)).toEqual([
			'approval_resolved: the arguments of tool "refund" (call call_1) changed while it waited for approval: asked about {"id":"A-17","amount":5}, approved {"id":"A-17","amount":500}; code of yours kept the arguments object and changed it (a person changes them with approve(id, { arguments }))',
		]);
	});

	it("is reported by recordAgent's check, whose events show the arguments as they were asked about", async () => {
		// checkAgentInvariants reads recorded events after the fact: the hook's change had reached the
		// very objects the events hold, so request and decision read alike and the events showed 500.
		const ran: string[] = [];
		const scripted = createScriptedModel([{ content: [toolCall("refund", { id: "A-17", amount: 5 })] }, { content: "Refunded." }]);
		const agent = new Agent({ initialState: { model: scripted.model, tools: [refund(ran)] }, streamFn: scripted.streamFn, beforeToolCall: raisesLater });
		const recording = recordAgent(agent);
		agent.subscribe((event) => {
			if (event.type === "approval_requested") setTimeout(() => void agent.approve(event.toolCallId), 5);
		});
		await agent.prompt("Refund A-17");
		recording.stop();
		expect(ran).toEqual(["A-17 500"]);
		const asked = recording.events.find((event) => event.type === "approval_requested");
		expect(asked && "args" in asked ? asked.args : undefined).toEqual({ id: "A-17", amount: 5 });
		expect(recording.check().map((each) => each.message)).toEqual([
			'approval_resolved: the arguments of tool "refund" (call call_1) changed while it waited for approval: asked about {"id":"A-17","amount":5}, approved {"id":"A-17","amount":500}; code of yours kept the arguments object and changed it (a person changes them with approve(id, { arguments }))',
		]);
	});

	it("a person's own change (approve with arguments) is not", async () => {
		const ran: string[] = [];
		const scripted = createScriptedModel([{ content: [toolCall("refund", { id: "A-17", amount: 5 })] }, { content: "Refunded." }]);
		const agent = new Agent({ initialState: { model: scripted.model, tools: [refund(ran)] }, streamFn: scripted.streamFn });
		const { EventInvariants } = await import("../../src/testing/event-invariants.js");
		const live = new EventInvariants();
		const recording = recordAgent(agent);
		agent.subscribe((event) => {
			live.onEvent(event);
			if (event.type === "approval_requested") void agent.approve(event.toolCallId, { arguments: { id: "A-17", amount: 4 } });
		});
		await agent.prompt("Refund A-17");
		expect(ran).toEqual(["A-17 4"]);
		expect(live.violations).toEqual([]);
		expect(recording.check()).toEqual([]);
	});

	it("is found by fuzzAgent, and a change after the decision by the tool check", async () => {
		const ran: string[] = [];
		const report = await fuzzAgent(
			factory(() => ({ initialState: { model, tools: [refund(ran)] }, beforeToolCall: raisesLater })),
			{ runs: 30, seed: 11, ...quiet },
		);
		expect(report.format()).toMatch(/\[approval\] (the arguments of tool "refund" \(call call_\d+\) changed while it waited for approval|tool "refund" \(call call_\d+\) ran with arguments other than those approved)/);

		// Changed by a listener once the decision is out: the tool runs with other arguments than approved.
		let kept: { amount: number } | undefined;
		const afterDecision = factory((self) => ({
			initialState: { model, tools: [refund(ran)] },
			beforeToolCall: async ({ args }) => void (kept = args as { amount: number }),
			listeners: [
				(event) => {
					if (event.type === "approval_resolved" && kept) kept.amount = 999;
					void self;
				},
			],
		}));
		const explored = await exploreAgent(afterDecision, { restores: false });
		expect(explored.format()).toMatch(/\[approval\] tool "refund" \(call c\d+\) ran with arguments other than those approved: approved \{"id":"x","amount":1\}, ran with \{"id":"x","amount":999\}/);
	}, 240_000);

	it("a correct agent with an approval is not reported", async () => {
		const ran: string[] = [];
		const explored = await exploreAgent(factory(() => ({ initialState: { model, tools: [refund(ran), lookup()] }, beforeToolCall: async () => undefined })));
		expect(explored.violations, explored.format()).toEqual([]);
		const fuzzed = await fuzzAgent(factory(() => ({ initialState: { model, tools: [refund(ran), lookup()] } })), { runs: 40, seed: 2, ...quiet });
		expect(fuzzed.violations, fuzzed.format()).toEqual([]);
	}, 240_000);
});

describe("a run that does not settle says what it waits on", () => {
	it("a tool that never settles: named, and no echo of its unanswered call", async () => {
		const never = factory(() => ({ initialState: { model, tools: [lookup(() => new Promise(() => undefined))] } }));
		const explored = await exploreAgent(never, { restores: false, settleTimeoutMs: 200, stepTimeoutMs: 200 });
		// Aborted or not, the same tool: no transcript or provider-request echo of the call it left unanswered.
		expect([...new Set(explored.violations.map((each) => each.rule))], explored.format()).toEqual(["settle"]);
		expect(explored.violations[0]?.message).toMatch(/waitForIdle did not settle within 200 ms after the path; the machine is in .*: tool "lookup_order" \(call c\d+\) has not settled \(its execute's promise is still pending\)/);
		const fuzzed = await fuzzAgent(never, { runs: 5, seed: 1, settleTimeoutMs: 200, ...quiet });
		expect([...new Set(fuzzed.violations.map((each) => each.rule))], fuzzed.format()).toEqual(["settle"]);
		expect(fuzzed.violations[0]?.message).toMatch(/tool "lookup_order" \(call call_\d+\) has not settled/);
	}, 120_000);

	it("an afterToolCall that never answers: named, not blamed on the tool's execute alone", async () => {
		const scripted = createScriptedModel([{ content: [toolCall("lookup_order", { id: "A-17" })] }]);
		let asked = false;
		const agent = new Agent({
			initialState: { model: scripted.model, tools: [lookup()] },
			streamFn: scripted.streamFn,
			afterToolCall: () => ((asked = true), new Promise<undefined>(() => undefined)),
		});
		void agent.prompt("Where is A-17?").catch(() => undefined);
		while (!asked) await new Promise((resolve) => setImmediate(resolve));
		expect(stillWaitingOn(agent)).toBe(': tool "lookup_order" (call call_1) has not settled (its execute\'s promise, or your afterToolCall after it, is still pending)');
		agent.dispose();
	});

	it("a tool that does not end on its signal: named as such after an abort", async () => {
		const scripted = createScriptedModel([{ content: [toolCall("lookup_order", { id: "A-17" })] }]);
		const agent = new Agent({ initialState: { model: scripted.model, tools: [lookup(() => new Promise(() => undefined))] }, streamFn: scripted.streamFn });
		const started = new Promise<void>((resolve) => agent.subscribe((event) => void (event.type === "tool_execution_start" && resolve())));
		void agent.prompt("Where is A-17?").catch(() => undefined);
		await started;
		await new Promise((resolve) => setImmediate(resolve));
		expect(stillWaitingOn(agent)).toBe(': tool "lookup_order" (call call_1) has not settled (its execute\'s promise is still pending)');
		agent.abort();
		await new Promise((resolve) => setImmediate(resolve));
		expect(stillWaitingOn(agent)).toBe(': tool "lookup_order" (call call_1) has not settled (its execute\'s promise is still pending; the run was aborted: it does not end on its signal)');
		agent.dispose();
	});

	it("a listener that steers on every turn: reported as a run that keeps going, and the walk ends", async () => {
		const steersForever = factory((self) => ({
			initialState: { model, tools: [lookup()] },
			listeners: [
				(event) => {
					if (event.type === "turn_end") self().steer({ role: "user", content: "and also?", timestamp: Date.now() });
				},
			],
		}));
		const explored = await exploreAgent(steersForever, { restores: false, maxPaths: 2, settleTimeoutMs: 200, shrink: false });
		expect(explored.violations.map((each) => each.rule), explored.format()).toContain("settle");
		expect(explored.format()).toMatch(/the run kept going \(\d+ events while the kit waited\): something starts turn after turn/);
		const fuzzed = await fuzzAgent(steersForever, { runs: 3, seed: 1, settleTimeoutMs: 200, ...quiet });
		expect(fuzzed.format()).toMatch(/\[settle\] .*the run kept going/);
	}, 120_000);
});

describe("a tool that throws on some input", () => {
	// A lookup that reads a field of an order it did not find: only ids the backend knows work.
	const orders: Record<string, { status: string }> = { "A-17": { status: "ships tomorrow" } };
	const crashes = factory(() => ({ initialState: { model, tools: [lookup(async (_id, { id }) => ok((orders[id] as { status: string }).status))] } }));

	it("is reported with the call's arguments when it throws a TypeError, by exploreAgent and fuzzAgent", async () => {
		const explored = await exploreAgent(crashes, { restores: false, calls: [{ name: "lookup_order", arguments: { id: "A-17" } }, { name: "lookup_order", arguments: { id: "B-2" } }] });
		const found = explored.violations.find((each) => each.rule === "tool-threw");
		expect(found?.message, explored.format()).toMatch(/^tool "lookup_order" \(call c\d+\) threw TypeError: Cannot read properties of undefined \(reading 'status'\) \(arguments \{"id":"B-2"\}\): a mistake in the tool/);
		expect(found?.path.join(" → "), explored.format()).toBe("prompt → delivered → delivered → stream.start → stream.done(tools1:1)");
		const fuzzed = await fuzzAgent(crashes, { runs: 30, seed: 4, ...quiet });
		expect(fuzzed.violations.map((each) => each.rule), fuzzed.format()).toContain("tool-threw");
		expect(fuzzed.format()).toContain("replay: fuzzAgent(factory, { seed: 4, path:");
	}, 120_000);

	it("a failure the tool reports on purpose is not (an Error of its own, or one with a cause)", async () => {
		const reports = factory(() => ({
			initialState: {
				model,
				tools: [
					lookup(async (_id, { id }) => {
						if (id === "B-2") throw new TypeError("fetch failed", { cause: new Error("connect ECONNREFUSED") });
						throw new Error(`no order ${id}`);
					}),
				],
			},
		}));
		const explored = await exploreAgent(reports, { restores: false, calls: [{ name: "lookup_order", arguments: { id: "A-17" } }, { name: "lookup_order", arguments: { id: "B-2" } }] });
		expect(explored.violations, explored.format()).toEqual([]);
	}, 120_000);
});

// Found by a probe (2026-12-07): an afterToolCall that changed the tool call it was handed made the
// transcript say the model asked for something it never did (every later request and the stored
// session read {"id":"MUT2"}), and neither recordAgent's check nor checkAgentInvariants said so.
describe("code that changes the model's tool call in place", () => {
	it("is reported by recordAgent's check, naming the call and both readings", async () => {
		const scripted = createScriptedModel([{ content: [toolCall("lookup_order", { id: "A-17" }, "c1")] }, { content: "done" }]);
		const agent = new Agent({
			initialState: { model: scripted.model, tools: [lookup()] },
			streamFn: scripted.streamFn,
			afterToolCall: async ({ toolCall: call }) => {
				(call.arguments as { id: string }).id = "MUT2";
				return undefined;
			},
		});
		const recording = recordAgent(agent);
		await agent.prompt("Where is A-17?");
		recording.stop();
		const found = recording.check().filter((each) => each.rule === "transcript");
		expect(found.map((each) => each.message)).toEqual([
			'tool_execution_end: the arguments of tool call c1 (tool "lookup_order") in the transcript changed after the model sent them: sent {"id":"A-17"}, now {"id":"MUT2"}; code of yours was handed the call (afterToolCall\'s or beforeToolCall\'s toolCall, a listener\'s message) and changed it in place (the arguments a call runs with are the args beforeToolCall is handed, a copy; a person\'s change goes through approve(id, { arguments }))',
		]);
	});

	it("an agent that changes nothing in place is not reported", async () => {
		const scripted = createScriptedModel([{ content: [toolCall("lookup_order", { id: "A-17" }, "c1")] }, { content: "done" }]);
		const agent = new Agent({ initialState: { model: scripted.model, tools: [lookup()] }, streamFn: scripted.streamFn, afterToolCall: async () => undefined });
		const recording = recordAgent(agent);
		await agent.prompt("Where is A-17?");
		recording.stop();
		expect(recording.check()).toEqual([]);
	});
});
