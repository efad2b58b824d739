/**
 * A run restored with a tool whose schema changed since the run was stored (a deploy while a
 * call waited for approval, or ran): the stored arguments were validated against the old schema,
 * so they are validated again against the tool given, and never reach its `execute` unless it
 * accepts them. The bare machine's `approve` with `args` is held to the tool's schema as the
 * Agent's `approve()` is. The class (any path to `execute` with arguments the schema rejects) is
 * the property in test/property/changed-tools.property.test.ts. From a store, a run whose
 * snapshot is older than the reply is prepared again from the journal, against the tool given:
 * those cases hold without the recheck too, and are kept for what they show. A tool whose
 * `needsApproval` changed: a question asked stands, and the new rule is asked of calls not yet prepared.
 */
import { createActor } from "xstate";
import { type TSchema, Type } from "typebox";
import { describe, expect, it } from "vitest";
import { Agent } from "../../src/agent.js";
import type { AgentSnapshot } from "../../src/durable/snapshot.js";
import { type AgentStore, createMemoryStore } from "../../src/durable/store.js";
import { agentMachine } from "../../src/machine.js";
import { createScriptedModel, type ScriptedBlock, toolCall } from "../../src/providers/scripted.js";
import type { AgentTool, AnyAgentTool, ToolExecutionMode } from "../../src/types/agent.js";
import type { AgentMachineEmitted } from "../../src/machines/types.js";
import type { AgentMessage } from "../../src/types/messages.js";
import { pendingApprovalsOf, toolGoneProblem } from "../../src/restate/session-view.js";
import { ok, textOf } from "../agent/helpers.js";

const amount = () => Type.Object({ amount: Type.Number() });
const withCurrency = () => Type.Object({ amount: Type.Number(), currency: Type.String() });

/** A `charge` tool over `schema` that logs the arguments it runs with; with `hold`, it tells it started and runs until aborted. */
function charge(schema: TSchema, ran: unknown[], extra: Partial<AgentTool<TSchema>> = {}, hold?: () => void): AnyAgentTool {
	return {
		name: "charge",
		label: "Charge",
		description: "Charges the card",
		parameters: schema,
		async execute(_id, args, signal) {
			ran.push(args);
			if (hold) {
				hold();
				await new Promise((resolve) => signal?.addEventListener("abort", resolve));
			}
			return ok(`charged ${JSON.stringify(args)}`);
		},
		...extra,
	};
}

function results(messages: readonly AgentMessage[]): string[] {
	return messages.filter((message) => message.role === "toolResult").map((message) => textOf(message).split("\n")[0] as string);
}

/**
 * A run waiting for approval, snapshotted (through JSON) and aborted: by default, of one `charge`
 * call; or of the calls of `reply` over `tools`.
 */
async function waitingSnapshot(reply: ScriptedBlock[] = [toolCall("charge", { amount: 1 }, "c1")], tools: AnyAgentTool[] = [charge(amount(), [], { needsApproval: true })], toolExecution?: ToolExecutionMode): Promise<AgentSnapshot> {
	const scripted = createScriptedModel([{ content: reply }, { content: "done" }]);
	const agent = new Agent({ initialState: { model: scripted.model, tools }, streamFn: scripted.streamFn, toolExecution });
	const asked = new Promise<void>((resolve) => agent.subscribe((event) => void (event.type === "approval_requested" && resolve())));
	const run = agent.prompt("charge 1");
	await asked;
	const snapshot = JSON.parse(JSON.stringify(agent.snapshot())) as AgentSnapshot;
	agent.abort();
	await run;
	return snapshot;
}

function restoredWith(snapshot: AgentSnapshot, tool: AnyAgentTool): Agent {
	return Agent.restore(snapshot, { initialState: { tools: [tool] }, streamFn: createScriptedModel([{ content: "done" }]).streamFn });
}

describe("a call waiting for approval, restored with a changed tool", () => {
	it("is listed with why its arguments no longer fit, is not approved as it is, and runs with arguments that fit", async () => {
		const ran: unknown[] = [];
		const agent = restoredWith(await waitingSnapshot(), charge(withCurrency(), ran, { needsApproval: true }));
		const [call] = agent.pendingApprovals;
		expect(call?.argsProblem).toMatch(/must have required properties currency/);
		expect(() => agent.approve("c1")).toThrow(/tool "charge" does not accept its stored arguments \(the tool changed since the call was asked, or the snapshot was edited\); approve it with \{ arguments \} that fit, or reject it/);
		expect(agent.pendingApprovals.map((waiting) => waiting.toolCallId)).toEqual(["c1"]);
		await agent.approve("c1", { arguments: { amount: 1, currency: "EUR" } });
		await agent.waitForIdle();
		expect(ran).toEqual([{ amount: 1, currency: "EUR" }]);
		expect(results(agent.state.messages)).toEqual(['charged {"amount":1,"currency":"EUR"}']);
	});

	it("can be rejected", async () => {
		const ran: unknown[] = [];
		const agent = restoredWith(await waitingSnapshot(), charge(withCurrency(), ran, { needsApproval: true }));
		await agent.reject("c1", "no currency");
		await agent.waitForIdle();
		expect(ran).toEqual([]);
		expect(results(agent.state.messages)).toEqual(["Tool call was rejected: no currency"]);
	});

	it("runs with its arguments coerced when the changed schema takes them so", async () => {
		const ran: unknown[] = [];
		const agent = restoredWith(await waitingSnapshot(), charge(Type.Object({ amount: Type.String() }), ran, { needsApproval: true }));
		expect(agent.pendingApprovals.map(({ toolCallId, args, argsProblem }) => ({ toolCallId, args, argsProblem }))).toEqual([{ toolCallId: "c1", args: { amount: "1" }, argsProblem: undefined }]);
		await agent.approve("c1");
		await agent.waitForIdle();
		expect(ran).toEqual([{ amount: "1" }]);
	});

	it("is as it was with an equal tool (a new object of the same schema)", async () => {
		const ran: unknown[] = [];
		const agent = restoredWith(await waitingSnapshot(), charge(amount(), ran, { needsApproval: true }));
		expect(agent.pendingApprovals.map(({ toolCallId, args, argsProblem }) => ({ toolCallId, args, argsProblem }))).toEqual([{ toolCallId: "c1", args: { amount: 1 }, argsProblem: undefined }]);
		await agent.approve("c1");
		await agent.waitForIdle();
		expect(ran).toEqual([{ amount: 1 }]);
	});
});

describe("a parallel batch waiting for approval, restored with one of its tools changed", () => {
	it("does not run a prepared call of the changed tool with arguments it no longer takes, and runs the unchanged tool's calls as asked", async () => {
		const ran: unknown[] = [];
		const refund = (schema: TSchema): AnyAgentTool => ({ ...charge(schema, ran), name: "refund", label: "Refund" });
		const snapshot = await waitingSnapshot([toolCall("charge", { amount: 1 }, "c1"), toolCall("refund", { amount: 2 }, "r1")], [charge(amount(), [], { needsApproval: true }), refund(amount())], "parallel");
		expect(snapshot.machine.context.run?.batch?.calls.map((call) => call.status)).toEqual(["awaiting-approval", "prepared"]);
		// The deploy: refunds now need a currency; charges are as they were.
		const restored = Agent.restore(snapshot, { initialState: { tools: [charge(amount(), ran, { needsApproval: true }), refund(withCurrency())] }, streamFn: createScriptedModel([{ content: "done" }]).streamFn, toolExecution: "parallel" });
		expect(restored.pendingApprovals.map(({ toolCallId, argsProblem }) => ({ toolCallId, argsProblem }))).toEqual([{ toolCallId: "c1", argsProblem: undefined }]);
		await restored.approve("c1");
		await restored.waitForIdle();
		expect(ran).toEqual([{ amount: 1 }]);
		expect(results(restored.state.messages)).toEqual(['charged {"amount":1}', 'Validation failed for tool "refund":']);
	});
});

describe("the calls waiting in a stored snapshot, as Restate's state shows them (pendingApprovalsOf)", () => {
	it("are rechecked against a changed tool, say a tool not among the tools given is gone, and are as stored without tools", async () => {
		const refund: AnyAgentTool = { ...charge(amount(), [], { needsApproval: true }), name: "refund", label: "Refund" };
		const snapshot = await waitingSnapshot([toolCall("charge", { amount: 1 }, "c1"), toolCall("refund", { amount: 2 }, "r1")], [charge(amount(), [], { needsApproval: true }), refund], "parallel");
		const shown = (tools?: AnyAgentTool[]) => pendingApprovalsOf(snapshot, tools).map(({ toolCallId, args, argsProblem }) => ({ toolCallId, args, problem: argsProblem ?? "" }));
		const [changed, gone] = shown([charge(withCurrency(), [], { needsApproval: true })]);
		expect(changed).toMatchObject({ toolCallId: "c1", args: { amount: 1 }, problem: expect.stringContaining("currency") });
		// A worker whose tools no longer have it (Restate: the worker's tools are the session's): it can only be rejected.
		expect(gone).toEqual({ toolCallId: "r1", args: { amount: 2 }, problem: toolGoneProblem("refund") });
		expect(shown([]).map((call) => call.problem)).toEqual([toolGoneProblem("charge"), toolGoneProblem("refund")]);
		// No tools given (the worker's options could not be made): every call as stored, none rechecked.
		expect(shown()).toEqual([
			{ toolCallId: "c1", args: { amount: 1 }, problem: "" },
			{ toolCallId: "r1", args: { amount: 2 }, problem: "" },
		]);
	});
});

describe("a replay-safe call a restart interrupted, restored with a tool that no longer takes its arguments", () => {
	for (const mode of ["parallel", "sequential", "streaming"] as ToolExecutionMode[]) {
		for (const from of ["snapshot", "store"] as const) {
			it(`is answered with the validation error, not run again (${mode}, from a ${from})`, async () => {
				const scripted = createScriptedModel([{ content: [toolCall("charge", { amount: 1 }, "c1")] }, { content: "done" }]);
				const store = from === "store" ? createMemoryStore() : undefined;
				let running!: () => void;
				const started = new Promise<void>((resolve) => (running = resolve));
				const first = new Agent({ initialState: { model: scripted.model, tools: [charge(amount(), [], { replay: "safe" }, running)] }, streamFn: scripted.streamFn, toolExecution: mode, store, sessionId: store ? "s" : undefined });
				const run = first.prompt("charge 1");
				await started;
				await first.saved();
				const snapshot = JSON.parse(JSON.stringify(first.snapshot())) as AgentSnapshot;
				const ran: unknown[] = [];
				const options = { initialState: { tools: [charge(withCurrency(), ran, { replay: "safe" })] }, streamFn: createScriptedModel([{ content: "done" }]).streamFn, toolExecution: mode };
				const restored = store ? await Agent.load({ ...options, store, sessionId: "s" }) : Agent.restore(snapshot, options);
				await restored.waitForIdle();
				expect(ran).toEqual([]);
				expect(results(restored.state.messages)).toEqual(['Validation failed for tool "charge":']);
				first.dispose();
				await run;
			});
		}
	}
});

describe("a stored approval whose arguments the changed tool does not take", () => {
	it("is asked again after the restart, not taken, nor left unanswerable", async () => {
		// The store keeps everything up to the decision, then nothing: the process died before the call's intent was stored.
		const durable = createMemoryStore();
		let dead = false;
		const store: AgentStore = {
			load: (id) => durable.load(id),
			saveSnapshot: (id, snapshot) => (dead ? new Promise(() => {}) : durable.saveSnapshot(id, snapshot)),
			appendJournal(id, entry) {
				if (dead) return new Promise(() => {});
				if (entry.kind === "approval" && entry.phase === "decided") dead = true;
				return durable.appendJournal(id, entry);
			},
		};
		const scripted = createScriptedModel([{ content: [toolCall("charge", { amount: 1 }, "c1")] }, { content: "done" }]);
		const first = new Agent({ initialState: { model: scripted.model, tools: [charge(amount(), [], { needsApproval: true })] }, streamFn: scripted.streamFn, store, sessionId: "s" });
		const asked = new Promise<void>((resolve) => first.subscribe((event) => void (event.type === "approval_requested" && resolve())));
		void first.prompt("charge 1");
		await asked;
		void first.approve("c1");
		await new Promise((resolve) => setTimeout(resolve, 10));
		expect((await durable.load("s"))?.snapshot?.journal.some((entry) => entry.kind === "approval" && entry.phase === "decided")).toBe(true);

		const ran: unknown[] = [];
		const restored = await Agent.load({ store: durable, sessionId: "s", initialState: { tools: [charge(withCurrency(), ran, { needsApproval: true })] }, streamFn: createScriptedModel([{ content: "done" }]).streamFn });
		expect(restored.pendingApprovals.map((call) => [call.toolCallId, call.argsProblem !== undefined])).toEqual([["c1", true]]);
		await restored.approve("c1", { arguments: { amount: 1, currency: "EUR" } });
		await restored.waitForIdle();
		expect(ran).toEqual([{ amount: 1, currency: "EUR" }]);
		first.dispose();
	});
});

describe("the bare machine's approve with arguments", () => {
	it("is not taken when the tool's schema rejects them (ignored as invalid-arguments), and runs them coerced when it takes them", async () => {
		const ran: unknown[] = [];
		const scripted = createScriptedModel([{ content: [toolCall("charge", { amount: 1 }, "c1")] }, { content: "done" }]);
		const actor = createActor(agentMachine, { input: { model: scripted.model, tools: [charge(amount(), ran, { needsApproval: true })], config: { streamFn: scripted.streamFn } } });
		const ignored: AgentMachineEmitted[] = [];
		actor.on("agentchart.approval.ignored", (event) => void ignored.push(event));
		const asked = new Promise<void>((resolve) => actor.on("approval_requested", () => resolve()));
		const ended = new Promise<void>((resolve) => actor.on("agent_end", () => resolve()));
		actor.start();
		actor.send({ type: "prompt", messages: [{ role: "user", content: "charge", timestamp: Date.now() }] });
		await asked;
		actor.send({ type: "approve", toolCallId: "c1", args: { amount: "x" } });
		expect(ignored).toEqual([expect.objectContaining({ toolCallId: "c1", decision: "approve", reason: "invalid-arguments", problem: expect.stringMatching(/amount: must be number/) })]);
		expect(actor.getSnapshot().matches({ running: "awaiting-approval" })).toBe(true);
		actor.send({ type: "approve", toolCallId: "c1", args: { amount: "7" } });
		await ended;
		expect(ran).toEqual([{ amount: 7 }]);
		actor.stop();
	});
});

describe("a restore with a tool whose needsApproval changed", () => {
	it("keeps a call that waits waiting for its person when the tool no longer needs approval", async () => {
		const ran: unknown[] = [];
		const agent = restoredWith(await waitingSnapshot(), charge(amount(), ran));
		await new Promise((resolve) => setTimeout(resolve, 10));
		expect(agent.pendingApprovals.map((call) => call.toolCallId)).toEqual(["c1"]);
		expect(ran).toEqual([]);
		await agent.approve("c1");
		await agent.waitForIdle();
		expect(ran).toEqual([{ amount: 1 }]);
	});

	it("asks the new rule of a sequential call after the waiting one, which runs only once approved", async () => {
		const ran: unknown[] = [];
		const refund = (extra: Partial<AgentTool<TSchema>>): AnyAgentTool => ({ ...charge(amount(), ran, extra), name: "refund", label: "Refund" });
		const snapshot = await waitingSnapshot([toolCall("charge", { amount: 1 }, "c1"), toolCall("refund", { amount: 2 }, "c2")], [charge(amount(), ran, { needsApproval: true }), refund({})], "sequential");
		expect(ran).toEqual([]);
		// The deploy: refunds now need a person too.
		const restored = Agent.restore(snapshot, { initialState: { tools: [charge(amount(), ran, { needsApproval: true }), refund({ needsApproval: true })] }, streamFn: createScriptedModel([{ content: "done" }]).streamFn, toolExecution: "sequential" });
		const askedAgain: string[] = [];
		restored.subscribe((event) => void (event.type === "approval_requested" && askedAgain.push(event.toolCallId)));
		await restored.approve("c1");
		await new Promise((resolve) => setTimeout(resolve, 10));
		expect(askedAgain).toEqual(["c2"]);
		expect(ran).toEqual([{ amount: 1 }]);
		await restored.approve("c2");
		await restored.waitForIdle();
		expect(ran).toEqual([{ amount: 1 }, { amount: 2 }]);
	});
});
