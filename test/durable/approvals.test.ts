/**
 * Human approval as a state: a tool that needs approval (or a `beforeToolCall` that asks for
 * it) makes the run wait in `awaiting-approval`, with nothing else running; decisions come in
 * any order and the results still reach the model in source order; a rejected call never runs;
 * an abort or an approval timeout rejects what waits; a wrong id is a clear error.
 */
import { describe, expect, it } from "vitest";
import { Agent } from "../../src/agent.js";
import type { AgentSnapshot } from "../../src/durable/snapshot.js";
import { type AgentStore, createMemoryStore } from "../../src/durable/store.js";
import { createScriptedModel, toolCall } from "../../src/providers/scripted.js";
import type { AgentEvent, AnyAgentTool, ToolExecutionMode } from "../../src/types/agent.js";
import type { AgentMessage } from "../../src/types/messages.js";
import { lateStore } from "./late-store.js";
import { deferred, expectValidTranscript, expectWellFormedRun, makeTool, manualStream, ok, textOf, thrownBy, watchEscapes } from "../agent/helpers.js";

/** A tool that logs each run; `needsApproval` as given. */
function loggingTool(name: string, log: string[], extra: Partial<AnyAgentTool> = {}): AnyAgentTool {
	return makeTool(name, async (_id, args) => {
		log.push(`${name} ${JSON.stringify(args)}`);
		return ok(`${name} done ${JSON.stringify(args)}`);
	}, extra);
}

/** An agent whose first reply calls the given tools, then answers "done"; its events are recorded. */
function agentCalling(calls: ReturnType<typeof toolCall>[], tools: AnyAgentTool[], options: { toolExecution?: ToolExecutionMode; beforeToolCall?: Agent["beforeToolCall"]; approvalTimeoutMs?: number } = {}) {
	const scripted = createScriptedModel([{ content: calls }, { content: "done" }]);
	const agent = new Agent({ initialState: { model: scripted.model, tools }, streamFn: scripted.streamFn, ...options });
	const events: AgentEvent[] = [];
	const waiting = { next: deferred<void>() };
	agent.subscribe((event) => {
		events.push(event);
		if (event.type === "approval_requested") waiting.next.resolve();
	});
	return { agent, events, scripted, waiting };
}

/** Waits until the run rests in awaiting-approval. */
async function untilAwaiting(agent: Agent): Promise<void> {
	for (let i = 0; i < 200; i++) {
		if (agent.actor.getSnapshot().matches({ running: "awaiting-approval" })) return;
		await new Promise((resolve) => setTimeout(resolve, 1));
	}
	throw new Error(`not awaiting approval: ${JSON.stringify(agent.actor.getSnapshot().value)}`);
}

/** The ids of the calls a snapshot has waiting for approval. */
function awaiting(snapshot: AgentSnapshot): string[] {
	return (snapshot.machine.context.run?.batch?.calls ?? []).filter((call) => call.status === "awaiting-approval").map((call) => call.toolCall.id);
}

function toolResultTexts(messages: readonly AgentMessage[]): string[] {
	return messages.filter((message) => message.role === "toolResult").map((message) => `${(message as { toolCallId: string }).toolCallId}: ${textOf(message)}`);
}

describe("approval as a state", () => {
	for (const mode of ["parallel", "sequential", "streaming"] as const) {
		it(`waits in awaiting-approval with nothing running, then runs what is approved and not what is rejected (${mode})`, async () => {
			const log: string[] = [];
			const { agent, events } = agentCalling(
				[toolCall("send", { to: "bob" }, "a"), toolCall("read", {}, "b"), toolCall("send", { to: "eve" }, "c")],
				[loggingTool("send", log, { needsApproval: true }), loggingTool("read", log)],
				{ toolExecution: mode },
			);
			const run = agent.prompt("go");
			await untilAwaiting(agent);
			// Nothing in flight while it waits: no child actor but the (idle) batch.
			const snapshot = agent.actor.getSnapshot();
			expect(Object.keys(snapshot.children).filter((id) => id !== "tools")).toEqual([]);
			// The sibling that needs no approval ran, except in a sequential batch (it waits its turn).
			expect(log).toEqual(mode === "sequential" ? [] : ["read {}"]);
			expect(agent.pendingApprovals.map((call) => call.toolCallId)).toEqual(mode === "sequential" ? ["a"] : ["a", "c"]);
			if (mode === "sequential") {
				agent.approve("a");
				await untilAwaiting(agent);
				expect(agent.pendingApprovals.map((call) => call.toolCallId)).toEqual(["c"]);
				agent.reject("c", "not eve");
			} else {
				// Answered out of order.
				agent.reject("c", "not eve");
				agent.approve("a");
			}
			await run;
			expect(log.sort()).toEqual(['read {}', 'send {"to":"bob"}']);
			// Results in source order, whatever the order of the decisions.
			expect(toolResultTexts(agent.state.messages)).toEqual(['a: send done {"to":"bob"}', "b: read done {}", "c: Tool call was rejected: not eve"]);
			expectWellFormedRun(events);
			expectValidTranscript(agent.state.messages);
			const decisions = events.flatMap((event) => (event.type === "approval_resolved" ? [`${event.toolCallId} ${event.decision}`] : []));
			expect(decisions.sort()).toEqual(["a approved", "c rejected"]);
		});
	}

	it("runs an approved call with the arguments the person gave, validated against the tool's schema", async () => {
		const log: string[] = [];
		const { Type } = await import("typebox");
		const send = makeTool("send", async (_id, args) => (log.push(JSON.stringify(args)), ok("sent")), { needsApproval: true, parameters: Type.Object({ to: Type.String() }) as never });
		const { agent } = agentCalling([toolCall("send", { to: "bob" }, "a")], [send]);
		const run = agent.prompt("go");
		await untilAwaiting(agent);
		expect(thrownBy(() => agent.approve("a", { arguments: { from: "x" } }))).toMatch(/to/);
		agent.approve("a", { arguments: { to: "alice" } });
		await run;
		expect(log).toEqual(['{"to":"alice"}']);
	});

	it("asks only for the calls a rule picks, and when beforeToolCall asks (with its reason)", async () => {
		const log: string[] = [];
		const send = loggingTool("send", log, { needsApproval: (args: unknown) => (args as { to?: string }).to === "eve" });
		const { agent, events } = agentCalling([toolCall("send", { to: "bob" }, "a"), toolCall("send", { to: "eve" }, "b"), toolCall("read", {}, "c")], [send, loggingTool("read", log)], {
			beforeToolCall: async ({ toolCall: call }) => (call.name === "read" ? { approval: "required", reason: "reads the vault" } : undefined),
		});
		const run = agent.prompt("go");
		await untilAwaiting(agent);
		expect(agent.pendingApprovals.map((call) => `${call.toolCallId} ${call.reason ?? ""}`)).toEqual(["b ", "c reads the vault"]);
		const requested = events.flatMap((event) => (event.type === "approval_requested" ? [`${event.toolCallId} ${event.toolName} ${JSON.stringify(event.args)} ${event.reason ?? ""}`] : []));
		expect(requested).toEqual(['b send {"to":"eve"} ', "c read {} reads the vault"]);
		agent.approve("c");
		agent.approve("b");
		await run;
		expect(log.sort()).toEqual(["read {}", 'send {"to":"bob"}', 'send {"to":"eve"}']);
	});

	it("an approval rule that returns a promise (typed code cannot) makes the call wait, saying why, and its rejection does not escape", async () => {
		const escapes = watchEscapes();
		try {
			const log: string[] = [];
			const send = loggingTool("send", log, { needsApproval: (() => Promise.reject(new Error("async rule"))) as never });
			const { agent } = agentCalling([toolCall("send", { to: "bob" }, "a")], [send]);
			const run = agent.prompt("go");
			await untilAwaiting(agent);
			expect(agent.pendingApprovals.map((call) => call.reason)).toEqual(["needsApproval failed: needsApproval returned a promise; it must return true or false synchronously"]);
			agent.reject("a");
			await run;
			await new Promise((resolve) => setTimeout(resolve, 10));
			expect(log).toEqual([]);
			expect(escapes.caught).toEqual([]);
		} finally {
			escapes.stop();
		}
	});

	it("rejects what waits when the run is aborted, and after the approval timeout", async () => {
		const log: string[] = [];
		const aborted = agentCalling([toolCall("send", { to: "bob" }, "a")], [loggingTool("send", log, { needsApproval: true })]);
		const run = aborted.agent.prompt("go");
		await untilAwaiting(aborted.agent);
		aborted.agent.abort();
		await run;
		expect(toolResultTexts(aborted.agent.state.messages)).toEqual(["a: Tool call was aborted before it ran"]);
		expect(aborted.events.some((event) => event.type === "approval_resolved" && event.decision === "aborted")).toBe(true);
		expectWellFormedRun(aborted.events);

		const timed = agentCalling([toolCall("send", { to: "bob" }, "a")], [loggingTool("send", log, { needsApproval: true })], { approvalTimeoutMs: 30 });
		await timed.agent.prompt("go");
		expect(toolResultTexts(timed.agent.state.messages)).toEqual(["a: No decision on this tool call came in time; it was not run"]);
		expect(timed.events.some((event) => event.type === "approval_resolved" && event.decision === "timed-out")).toBe(true);
		expect(log).toEqual([]);
	});

	for (const mode of ["parallel", "streaming"] as const) {
		it(`rejects a call when its approval deadline passes while a sibling call still runs, not once the sibling ends (${mode})`, async () => {
			const log: string[] = [];
			const sibling = deferred<void>();
			const slow = makeTool("slow", async () => {
				await sibling.promise;
				return ok("slow done");
			});
			const timed = agentCalling([toolCall("send", { to: "bob" }, "a"), toolCall("slow", {}, "b")], [loggingTool("send", log, { needsApproval: true }), slow], { approvalTimeoutMs: 30, toolExecution: mode });
			const run = timed.agent.prompt("go");
			// The sibling never ends until the test lets it: the deadline must pass meanwhile.
			for (let i = 0; i < 400 && !timed.events.some((event) => event.type === "approval_resolved"); i++) await new Promise((resolve) => setTimeout(resolve, 5));
			expect(timed.events.filter((event) => event.type === "approval_resolved").map((event) => event.type === "approval_resolved" && `${event.toolCallId} ${event.decision}`)).toEqual(["a timed-out"]);
			expect(timed.agent.pendingApprovals).toEqual([]);
			expect(thrownBy(() => timed.agent.approve("a"))).toMatch(/not waiting for approval/);
			sibling.resolve();
			await run;
			expect(toolResultTexts(timed.agent.state.messages)).toEqual(["a: No decision on this tool call came in time; it was not run", "b: slow done"]);
			expect(log).toEqual([]);
			expectWellFormedRun(timed.events);
			expectValidTranscript(timed.agent.state.messages);
		});
	}

	it("after abort() in a listener, nothing waits any more: pendingApprovals is empty and approve() says the run was aborted (before, it was accepted and reported approved)", async () => {
		const log: string[] = [];
		const aborting = agentCalling([toolCall("send", { to: "bob" }, "a")], [loggingTool("send", log, { needsApproval: true })]);
		let answered = "";
		let pending: unknown;
		aborting.agent.subscribe((event) => {
			if (event.type !== "approval_requested") return;
			aborting.agent.abort();
			pending = aborting.agent.pendingApprovals;
			answered = thrownBy(() => aborting.agent.approve("a"));
		});
		await aborting.agent.prompt("go");
		expect(pending).toEqual([]);
		expect(answered).toMatch(/"a" is not waiting for approval: the run was aborted/);
		expect(aborting.events.filter((event) => event.type === "approval_resolved").map((event) => event.type === "approval_resolved" && event.decision)).toEqual(["aborted"]);
		expect(log).toEqual([]);
		expectWellFormedRun(aborting.events);
	});

	// A restart must not hand a person a fresh timeout: the deadline is the one the wait started
	// with, wherever the run is restored (the time the process was down counts against it).
	it("keeps an approval's deadline across a restore: the same deadline, a rejection when it passes, at once if it passed while the run was stored", async () => {
		const log: string[] = [];
		const tools = [loggingTool("send", log, { needsApproval: true })];
		const { agent } = agentCalling([toolCall("send", { to: "bob" }, "a")], tools, { approvalTimeoutMs: 60_000 });
		const run = agent.prompt("go");
		await untilAwaiting(agent);
		const deadline = agent.pendingApprovals[0]?.deadline;
		expect(deadline).toBeGreaterThan(Date.now());
		const stored = JSON.stringify(agent.snapshot());
		agent.abort();
		await run;
		/** The stored run, with its deadline moved to `at` (as if that much time had passed meanwhile). */
		const storedWithDeadline = (at: number | undefined): AgentSnapshot => {
			const snapshot = JSON.parse(stored) as AgentSnapshot;
			for (const call of snapshot.machine.context.run?.batch?.calls ?? []) if (call.approval && at !== undefined) call.approval.deadline = at;
			return snapshot;
		};
		const restore = (snapshot: AgentSnapshot) => {
			const scripted = createScriptedModel([{ content: "done" }]);
			return Agent.restore(snapshot, { initialState: { tools }, streamFn: scripted.streamFn, approvalTimeoutMs: 60_000 });
		};

		// Restored before its deadline: the same deadline, not a new one from the restore.
		const waiting = restore(storedWithDeadline(undefined));
		expect(waiting.pendingApprovals.map((call) => [call.toolCallId, call.deadline])).toEqual([["a", deadline]]);
		waiting.dispose();

		// The deadline comes while the restored run waits: the call is rejected then, not after a full timeout.
		const soon = restore(storedWithDeadline(Date.now() + 50));
		expect(soon.pendingApprovals.map((call) => call.toolCallId)).toEqual(["a"]);
		await soon.waitForIdle();
		expect(toolResultTexts(soon.state.messages)).toEqual(["a: No decision on this tool call came in time; it was not run"]);
		expect(textOf(soon.state.messages.at(-1) as AgentMessage)).toBe("done");

		// It passed while the run was stored: rejected as the run resumes.
		const late = restore(storedWithDeadline(Date.now() - 1));
		await late.waitForIdle();
		expect(toolResultTexts(late.state.messages)).toEqual(["a: No decision on this tool call came in time; it was not run"]);
		expectValidTranscript(late.state.messages);
		expect(log).toEqual([]);
	});

	it("refuses a decision whose options or reason it cannot take, deciding nothing: a misspelt { args } used to approve the model's arguments", async () => {
		const log: string[] = [];
		const { agent } = agentCalling([toolCall("send", { to: "bob" }, "a")], [loggingTool("send", log, { needsApproval: true })]);
		const run = agent.prompt("go");
		await untilAwaiting(agent);
		const refusals: [string, () => unknown][] = [
			['unknown option "args" (the only one is "arguments"); nothing was decided', () => agent.approve("a", { args: { to: "alice" } } as never)],
			['unknown option "argument", "force"', () => agent.approve("a", { argument: {}, force: true } as never)],
			['the options must be { arguments?: {...} }, got "yes"', () => agent.approve("a", "yes" as never)],
			["the options must be { arguments?: {...} }, got null", () => agent.approve("a", null as never)],
			["the reason must be a text, got 42", () => agent.reject("a", 42 as never)],
		];
		for (const [message, decide] of refusals) {
			let thrown: unknown;
			try {
				decide();
			} catch (error) {
				thrown = error;
			}
			expect(thrown).toBeInstanceOf(TypeError);
			expect((thrown as Error).message).toContain(message);
			expect(agent.pendingApprovals.map((call) => call.toolCallId)).toEqual(["a"]);
		}
		await agent.approve("a", { arguments: { to: "alice" } });
		await run;
		expect(log).toEqual(['send {"to":"alice"}']);
	});

	it("says clearly when an id is not waiting: unknown, answered already, or no run", async () => {
		const log: string[] = [];
		const { agent } = agentCalling([toolCall("send", { to: "bob" }, "a")], [loggingTool("send", log, { needsApproval: true })]);
		expect(thrownBy(() => agent.approve("a"))).toMatch(/tool call "a" is not waiting for approval \(none is\)/);
		const run = agent.prompt("go");
		await untilAwaiting(agent);
		expect(thrownBy(() => agent.reject("nope"))).toMatch(/tool call "nope" is not waiting for approval \(waiting: a\)/);
		agent.approve("a");
		expect(thrownBy(() => agent.approve("a"))).toMatch(/tool call "a" is not waiting for approval/);
		await run;
		expect(log).toEqual(['send {"to":"bob"}']);
	});

	it("answers a call approved from the listener of its own request at once", async () => {
		const log: string[] = [];
		const { agent } = agentCalling([toolCall("send", { to: "bob" }, "a")], [loggingTool("send", log, { needsApproval: true })]);
		agent.subscribe((event) => {
			if (event.type === "approval_requested") agent.approve(event.toolCallId);
		});
		await agent.prompt("go");
		expect(log).toEqual(['send {"to":"bob"}']);
	});

	it("asks a person only once the question is stored (a crash after the request cannot lose it)", async () => {
		const log: string[] = [];
		const inner = createMemoryStore();
		const slowSave = { saving: deferred<void>(), release: deferred<void>() };
		// The store takes its time with snapshots; the request must wait for it.
		const store: AgentStore = {
			load: (id) => inner.load(id),
			appendJournal: (id, entry) => inner.appendJournal(id, entry),
			saveSnapshot: async (id, snapshot) => {
				if (awaiting(snapshot).length > 0) {
					slowSave.saving.resolve();
					await slowSave.release.promise;
				}
				await inner.saveSnapshot(id, snapshot);
			},
		};
		const scripted = createScriptedModel([{ content: [toolCall("send", { to: "bob" }, "a")] }, { content: "done" }]);
		const agent = new Agent({ initialState: { model: scripted.model, tools: [loggingTool("send", log, { needsApproval: true })] }, streamFn: scripted.streamFn, store, sessionId: "s" });
		const storedWhenAsked: string[][] = [];
		agent.subscribe(async (event) => {
			if (event.type !== "approval_requested") return;
			const stored = await inner.load("s");
			storedWhenAsked.push(stored?.snapshot ? awaiting(stored.snapshot) : []);
			agent.approve(event.toolCallId);
		});
		const run = agent.prompt("go");
		await slowSave.saving.promise;
		await new Promise((resolve) => setTimeout(resolve, 20));
		expect(storedWhenAsked).toEqual([]);
		expect(log).toEqual([]);
		slowSave.release.resolve();
		await run;
		expect(storedWhenAsked).toEqual([["a"]]);
		expect(log).toEqual(['send {"to":"bob"}']);
	});
	it("resolves approve() and reject() only once the decision is stored", async () => {
		const inner = createMemoryStore();
		const slowDecision = { release: deferred<void>() };
		const store: AgentStore = {
			load: (id) => inner.load(id),
			saveSnapshot: (id, snapshot) => inner.saveSnapshot(id, snapshot),
			appendJournal: async (id, entry) => {
				if (entry.kind === "approval" && entry.phase === "decided") await slowDecision.release.promise;
				await inner.appendJournal(id, entry);
			},
		};
		const log: string[] = [];
		const scripted = createScriptedModel([{ content: [toolCall("send", { to: "bob" }, "a"), toolCall("send", { to: "eve" }, "b")] }, { content: "done" }]);
		const agent = new Agent({ initialState: { model: scripted.model, tools: [loggingTool("send", log, { needsApproval: true })] }, streamFn: scripted.streamFn, store, sessionId: "s" });
		const run = agent.prompt("go");
		await untilAwaiting(agent);
		const settled: string[] = [];
		const approved = agent.approve("a").then(() => settled.push("approve"));
		const rejected = agent.reject("b", "no").then(() => settled.push("reject"));
		await new Promise((resolve) => setTimeout(resolve, 20));
		expect(settled).toEqual([]);
		slowDecision.release.resolve();
		await Promise.all([approved, rejected, run]);
		expect(settled.sort()).toEqual(["approve", "reject"]);
		expect(log).toEqual(['send {"to":"bob"}']);
	});

	for (const decision of ["approve", "reject"] as const) {
		for (const mode of ["parallel", "sequential", "streaming"] as const) {
			it(`a process may exit once ${decision}() resolved: a steer and a follow-up sent before it are stored too (${mode})`, async () => {
				const inner = createMemoryStore();
				// Every write lands a moment after it is handed over, as on a disk.
				const store = lateStore(inner);
				const log: string[] = [];
				const tools = [loggingTool("send", log, { needsApproval: true })];
				const scripted = createScriptedModel([{ content: [toolCall("send", { to: "bob" }, "a")] }, { content: "done" }]);
				const first = new Agent({ initialState: { model: scripted.model, tools }, streamFn: scripted.streamFn, store, sessionId: "s", toolExecution: mode });
				void first.prompt("go");
				await untilAwaiting(first);
				await first.saved();
				first.steer({ role: "user", content: "STEER", timestamp: 1 });
				first.followUp({ role: "user", content: "FOLLOW", timestamp: 2 });
				await (decision === "approve" ? first.approve("a") : first.reject("a", "no"));
				// The process exits here: what the store holds at this moment is all a restart finds.
				const held = (await inner.load("s"))?.snapshot as AgentSnapshot;
				first.dispose();
				const stopped = createMemoryStore();
				stopped.saveSnapshot("s", held);
				const again = createScriptedModel([{ content: "after the tools" }, { content: "after the follow-up" }]);
				const second = await Agent.load({ store: stopped, sessionId: "s", initialState: { tools }, streamFn: again.streamFn, toolExecution: mode });
				expect(second.hasQueuedMessages()).toBe(true);
				await second.waitForIdle();
				const users = second.state.messages.filter((message) => message.role === "user").map((message) => textOf(message));
				expect(users).toEqual(["go", "STEER", "FOLLOW"]);
				expect(log).toEqual(decision === "approve" ? ['send {"to":"bob"}'] : []);
				expectValidTranscript(second.state.messages);
			});
		}
	}

	it("streaming: calls asked about while their reply still streamed, when the process stopped, are not asked again by the restored agent: it lists them, and answering them as README shows (listener and pendingApprovals) runs each once", async () => {
		const store = createMemoryStore();
		const log: string[] = [];
		const tools = [loggingTool("deploy", log, { needsApproval: true })];
		const stream = manualStream();
		const first = new Agent({ initialState: { model: createScriptedModel([]).model, tools }, streamFn: stream.streamFn, toolExecution: "streaming", store, sessionId: "s" });
		void first.prompt("go");
		await stream.opened;
		stream.start();
		stream.toolCallEnd({ type: "toolCall", id: "c1", name: "deploy", arguments: { service: "billing" } });
		stream.toolCallEnd({ type: "toolCall", id: "c2", name: "deploy", arguments: { service: "auth" } });
		for (let i = 0; i < 200 && first.pendingApprovals.length < 2; i++) await new Promise((resolve) => setTimeout(resolve, 1));
		expect(first.pendingApprovals.map((call) => call.toolCallId)).toEqual(["c1", "c2"]);
		await first.saved();
		// The process stops here, the reply still streaming.
		first.dispose();

		const again = createScriptedModel([{ content: "deployed" }]);
		const second = await Agent.load({ store, sessionId: "s", initialState: { tools }, streamFn: again.streamFn, toolExecution: "streaming" });
		const asked: string[] = [];
		const failures: string[] = [];
		second.subscribe(async (event) => {
			if (event.type !== "approval_requested") return;
			asked.push(event.toolCallId);
			await second.approve(event.toolCallId).catch((error: unknown) => failures.push(String(error)));
		});
		expect(second.pendingApprovals.map((call) => call.toolCallId)).toEqual(["c1", "c2"]);
		for (const call of second.pendingApprovals) await second.approve(call.toolCallId);
		await second.waitForIdle();
		expect(asked).toEqual([]);
		expect(failures).toEqual([]);
		expect(second.state.errorMessage).toBeUndefined();
		expect(log.sort()).toEqual(['deploy {"service":"auth"}', 'deploy {"service":"billing"}']);
		expectValidTranscript(second.state.messages);
	});

	it("keeps a stored decision when the stored snapshot still shows the call waiting (a crash right after reject resolved)", async () => {
		const inner = createMemoryStore();
		// The store keeps the first snapshot with a call waiting and no later one: the process
		// died before its next snapshot, with only the journal written since.
		let frozen = false;
		const store: AgentStore = {
			load: (id) => inner.load(id),
			appendJournal: (id, entry) => inner.appendJournal(id, entry),
			saveSnapshot: async (id, snapshot) => {
				if (frozen) return;
				if (awaiting(snapshot).length > 0) frozen = true;
				await inner.saveSnapshot(id, snapshot);
			},
		};
		const log: string[] = [];
		const tools = [loggingTool("send", log, { needsApproval: true })];
		const scripted = createScriptedModel([{ content: [toolCall("send", { to: "bob" }, "a")] }, { content: "done" }]);
		const first = new Agent({ initialState: { model: scripted.model, tools }, streamFn: scripted.streamFn, store, sessionId: "s" });
		void first.prompt("go");
		await untilAwaiting(first);
		await first.reject("a", "not bob");
		first.dispose();
		expect(awaiting((await inner.load("s"))?.snapshot as AgentSnapshot)).toEqual(["a"]);

		const again = createScriptedModel([{ content: "done" }]);
		const asked: string[] = [];
		const second = await Agent.load({ store, sessionId: "s", initialState: { tools }, streamFn: again.streamFn, listeners: [(event) => void (event.type === "approval_requested" && asked.push(event.toolCallId))] });
		// Nobody is asked again: the stored decision answers the call.
		expect(second.pendingApprovals).toEqual([]);
		await second.waitForIdle();
		expect(asked).toEqual([]);
		expect(log).toEqual([]);
		expect(toolResultTexts(second.state.messages)).toEqual([expect.stringMatching(/^a: .*not bob/)]);
		expectValidTranscript(second.state.messages);
	});
});
