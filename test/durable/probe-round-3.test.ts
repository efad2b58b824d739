/**
 * Defects an adversarial probe of durable runs and approval found (2026-12-06), each fixed, each
 * test failing before its fix:
 * - a session restarted twice in a row mid-run (after a snapshot taken mid-run) could no longer be
 *   loaded: the restored run journaled again the tool outcome it had read from the journal;
 * - `dispose()` with two calls waiting for approval stored the run it closed;
 * - `approvalTimeoutMs: Infinity` made a snapshot that is not JSON, and a timeout longer than
 *   Node's longest timer fired again and again;
 * - `approve(id, { arguments })` with a BigInt threw JSON's bare TypeError;
 * - the arguments `pendingApprovals` and `approval_requested` hand out were the call's own;
 * - a message put in `state.messages` during a run was not stored at its end;
 * - an agent loaded from the memory store changed what the store held.
 */
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { Agent } from "../../src/agent.js";
import { createFileStore } from "../../src/durable/file-store.js";
import { type AgentStore, createMemoryStore } from "../../src/durable/store.js";
import { createScriptedModel, toolCall } from "../../src/providers/scripted.js";
import type { AnyAgentTool, ToolExecutionMode } from "../../src/types/agent.js";
import type { AgentMessage } from "../../src/types/messages.js";
import { makeTool, ok, sleep, textOf } from "../agent/helpers.js";

const folders: string[] = [];
afterEach(async () => {
	for (const folder of folders.splice(0)) await rm(folder, { recursive: true, force: true });
});

async function fileStore(): Promise<{ store: () => AgentStore; folder: string }> {
	const folder = await mkdtemp(join(tmpdir(), "agentchart-probe3-"));
	folders.push(folder);
	return { store: () => createFileStore(folder, { fsync: "never" }), folder };
}

async function until(condition: () => boolean, what: string): Promise<void> {
	for (let i = 0; i < 1000; i++) {
		if (condition()) return;
		await sleep(2);
	}
	throw new Error(`timed out waiting for ${what}`);
}

function brief(messages: readonly AgentMessage[]): string[] {
	return messages.map((message) => `${message.role}: ${textOf(message)}`);
}

/** A reply that never comes: each process stops while it streams. */
const HANGING = { content: "never", delayMs: 60_000 };

/**
 * A session whose run was stored waiting for approval of `pay` (a snapshot mid-run), then approved:
 * the tool ran, and the process stopped while the next model call streamed. `runs` logs the tool.
 */
async function stoppedWhileTheNextReplyStreams(store: () => AgentStore, mode: ToolExecutionMode) {
	const runs: string[] = [];
	const tools = (): AnyAgentTool[] => [makeTool("pay", async () => (runs.push("pay"), ok("paid")), { needsApproval: true })];
	const model = createScriptedModel([{ content: [toolCall("pay", {}, "c1")] }, HANGING]);
	const options = { sessionId: "s", toolExecution: mode };
	const agent = new Agent({ ...options, store: store(), initialState: { model: model.model, tools: tools() }, streamFn: model.streamFn });
	void agent.prompt("go").catch(() => {});
	await until(() => agent.pendingApprovals.length === 1, "the approval");
	await agent.approve("c1");
	await until(() => model.calls.length === 2, "the second model call");
	await agent.saved();
	agent.dispose();
	return { runs, tools, model, options };
}

describe("restarts in a row", () => {
	for (const kind of ["memory", "file"] as const) {
		for (const mode of ["parallel", "sequential"] as const satisfies readonly ToolExecutionMode[]) {
			it(`loads a session whose run was restarted twice while its next model call was in flight, after a snapshot mid-run (${kind} store, ${mode})`, async () => {
				const memory = createMemoryStore();
				const store = kind === "memory" ? () => memory : (await fileStore()).store;
				const { runs, tools, model: first, options } = await stoppedWhileTheNextReplyStreams(store, mode);
				for (let restart = 1; restart <= 3; restart++) {
					const model = createScriptedModel([restart === 3 ? { content: "done" } : HANGING]);
					const agent = await Agent.load({ ...options, initialState: { model: first.model, tools: tools() }, store: store(), streamFn: model.streamFn });
					await until(() => model.calls.length === 1, `the model call made again after restart ${restart}`);
					if (restart === 3) {
						await agent.waitForIdle();
						expect(brief(agent.state.messages)).toEqual(["user: go", "assistant: ", "toolResult: paid", "assistant: done"]);
					}
					await agent.saved();
					agent.dispose();
				}
				expect(runs).toEqual(["pay"]);
			});
		}
	}

	it("journals a tool's outcome once, however often the run is restarted", async () => {
		const { store, folder } = await fileStore();
		const { tools, model: first, options } = await stoppedWhileTheNextReplyStreams(store, "parallel");
		for (let restart = 1; restart <= 2; restart++) {
			const model = createScriptedModel([HANGING]);
			const agent = await Agent.load({ ...options, store: store(), initialState: { model: first.model, tools: tools() }, streamFn: model.streamFn });
			await until(() => model.calls.length === 1, "the model call made again");
			await agent.saved();
			agent.dispose();
		}
		const current = (await readFile(join(folder, "s", "current"), "utf8")).trim();
		const lines = (await readFile(join(folder, "s", current, "journal.jsonl"), "utf8")).split("\n").filter(Boolean);
		const outcomes = lines.filter((line) => line.includes('"kind":"tool"') && line.includes('"phase":"outcome"'));
		expect(outcomes).toHaveLength(1);
	});
});

describe("dispose() with several calls waiting for approval", () => {
	for (const kind of ["memory", "file"] as const) {
		for (const count of [2, 3]) {
			it(`keeps all ${count} waiting in the store (${kind} store)`, async () => {
				const memory = createMemoryStore();
				const store = kind === "memory" ? () => memory : (await fileStore()).store;
				const runs: string[] = [];
				const tools = (): AnyAgentTool[] => [makeTool("t", async (id) => (runs.push(id), ok(`ran ${id}`)), { needsApproval: true })];
				const ids = Array.from({ length: count }, (_, index) => `c${index}`);
				const scripted = createScriptedModel([{ content: ids.map((id) => toolCall("t", {}, id)) }, { content: "done" }]);
				const a = new Agent({ sessionId: "s", store: store(), initialState: { model: scripted.model, tools: tools() }, streamFn: scripted.streamFn });
				const prompt = a.prompt("go");
				await until(() => a.pendingApprovals.length === count, "every approval");
				a.dispose();
				await prompt;
				await a.saved().catch(() => {});
				const next = createScriptedModel([{ content: "done" }]);
				const b = await Agent.load({ sessionId: "s", store: store(), initialState: { tools: tools() }, streamFn: next.streamFn });
				expect(b.pendingApprovals.map((call) => call.toolCallId)).toEqual(ids);
				for (const id of ids) await b.approve(id);
				await b.waitForIdle();
				expect(runs).toEqual(ids);
				b.dispose();
			});
		}
	}

	it("keeps what a decision made before the dispose decided, and the rest waiting", async () => {
		const memory = createMemoryStore();
		const tools = (): AnyAgentTool[] => [makeTool("t", async (id) => ok(`ran ${id}`), { needsApproval: true })];
		const scripted = createScriptedModel([{ content: [toolCall("t", {}, "c0"), toolCall("t", {}, "c1"), toolCall("t", {}, "c2")] }, { content: "done" }]);
		const a = new Agent({ sessionId: "s", store: memory, initialState: { model: scripted.model, tools: tools() }, streamFn: scripted.streamFn });
		void a.prompt("go");
		await until(() => a.pendingApprovals.length === 3, "every approval");
		void a.reject("c0", "no");
		a.dispose();
		await sleep(20);
		const b = await Agent.load({ sessionId: "s", store: memory, initialState: { tools: tools() }, streamFn: createScriptedModel([{ content: "done" }]).streamFn });
		expect(b.pendingApprovals.map((call) => call.toolCallId)).toEqual(["c1", "c2"]);
		b.dispose();
	});
});

describe("approvalTimeoutMs out of the ordinary", () => {
	it("takes Infinity as no timeout: the snapshot is JSON and restores, with the call still waiting", async () => {
		const store = createMemoryStore();
		const tools = (): AnyAgentTool[] => [makeTool("t", async () => ok("ran"), { needsApproval: true })];
		const scripted = createScriptedModel([{ content: [toolCall("t", {}, "a")] }, { content: "done" }]);
		const agent = new Agent({ sessionId: "s", store, approvalTimeoutMs: Number.POSITIVE_INFINITY, initialState: { model: scripted.model, tools: tools() }, streamFn: scripted.streamFn });
		void agent.prompt("go");
		await until(() => agent.pendingApprovals.length === 1, "the approval");
		expect(agent.pendingApprovals[0]?.deadline).toBeUndefined();
		const snapshot = agent.snapshot();
		expect(JSON.parse(JSON.stringify(snapshot))).toEqual(snapshot);
		const restored = Agent.restore(JSON.parse(JSON.stringify(snapshot)), { initialState: { tools: tools() }, streamFn: createScriptedModel([{ content: "done" }]).streamFn });
		expect(restored.pendingApprovals.map((call) => call.toolCallId)).toEqual(["a"]);
		await agent.saved();
		agent.dispose();
		const loaded = await Agent.load({ sessionId: "s", store, initialState: { tools: tools() }, streamFn: createScriptedModel([{ content: "done" }]).streamFn });
		expect(loaded.pendingApprovals.map((call) => call.toolCallId)).toEqual(["a"]);
		expect(loaded.storeProblems).toEqual([]);
		await loaded.approve("a");
		await loaded.waitForIdle();
		expect(textOf(loaded.state.messages.at(-1))).toBe("done");
	});

	it("waits quietly with a timeout longer than Node's longest timer (30 days)", async () => {
		const warnings: string[] = [];
		const onWarning = (warning: Error) => warnings.push(warning.name);
		process.on("warning", onWarning);
		try {
			const scripted = createScriptedModel([{ content: [toolCall("t", {}, "a")] }, { content: "done" }]);
			const tools: AnyAgentTool[] = [makeTool("t", async () => ok("ran"), { needsApproval: true })];
			const agent = new Agent({ approvalTimeoutMs: 30 * 24 * 3600 * 1000, initialState: { model: scripted.model, tools }, streamFn: scripted.streamFn });
			void agent.prompt("go");
			await until(() => agent.pendingApprovals.length === 1, "the approval");
			// The chart's approval timer fired at once, again and again, before the fix.
			const inspected: string[] = [];
			const seen = agent.actor.system.inspect({ next: (event) => void (event.type === "@xstate.event" && inspected.push((event.event as { type: string }).type)) });
			await sleep(100);
			seen.unsubscribe();
			expect(inspected.filter((type) => type === "approval.timeout")).toEqual([]);
			expect(agent.pendingApprovals.map((call) => call.toolCallId)).toEqual(["a"]);
			expect(warnings.filter((name) => name === "TimeoutOverflowWarning")).toEqual([]);
			agent.abort();
			await agent.waitForIdle();
		} finally {
			process.off("warning", onWarning);
		}
	});
});

describe("approval arguments", () => {
	for (const stored of [false, true]) {
		it(`approve(id, { arguments }) with a BigInt throws an error that says so (${stored ? "with" : "without"} a store)`, async () => {
			const scripted = createScriptedModel([{ content: [toolCall("t", { n: 1 }, "a")] }, { content: "done" }]);
			const tools: AnyAgentTool[] = [makeTool("t", async () => ok("ran"), { needsApproval: true, parameters: { type: "object", properties: { n: { type: "number" } } } })];
			const agent = new Agent({ ...(stored ? { store: createMemoryStore(), sessionId: "s" } : {}), initialState: { model: scripted.model, tools }, streamFn: scripted.streamFn });
			void agent.prompt("go");
			await until(() => agent.pendingApprovals.length === 1, "the approval");
			let thrown: unknown;
			try {
				agent.approve("a", { arguments: { n: 10n ** 30n } });
			} catch (error) {
				thrown = error;
			}
			expect(thrown).toBeInstanceOf(Error);
			expect((thrown as Error).message).not.toMatch(/^Do not know how to serialize/);
			// Tool arguments are JSON, as a model sends them, with a store or without.
			expect(thrown).toBeInstanceOf(TypeError);
			expect((thrown as Error).message).toMatch(/arguments\.n is a BigInt/);
			expect(agent.pendingApprovals.map((call) => call.toolCallId)).toEqual(["a"]);
			await agent.reject("a");
			await agent.waitForIdle();
		});
	}

	for (const where of ["pendingApprovals", "approval_requested"] as const) {
		it(`the arguments ${where} shows are a copy: editing them does not change what the call runs with`, async () => {
			const ran: unknown[] = [];
			const scripted = createScriptedModel([{ content: [toolCall("t", { n: 1 }, "a")] }, { content: "done" }]);
			const tools: AnyAgentTool[] = [makeTool("t", async (_id, args) => (ran.push(args), ok("ran")), { needsApproval: true, parameters: { type: "object", properties: { n: { type: "number" } } } })];
			const agent = new Agent({ initialState: { model: scripted.model, tools }, streamFn: scripted.streamFn });
			let shown: { n: unknown } | undefined;
			agent.subscribe((event) => {
				if (event.type === "approval_requested" && where === "approval_requested") shown = event.args as { n: unknown };
			});
			void agent.prompt("go");
			await until(() => agent.pendingApprovals.length === 1, "the approval");
			if (where === "pendingApprovals") shown = agent.pendingApprovals[0]?.args as { n: unknown };
			expect(shown).toEqual({ n: 1 });
			(shown as { n: unknown }).n = "not a number";
			expect(agent.pendingApprovals[0]?.args).toEqual({ n: 1 });
			expect(agent.snapshot().machine.context.run?.batch?.calls[0]?.args).toEqual({ n: 1 });
			await agent.approve("a");
			await agent.waitForIdle();
			expect(ran).toEqual([{ n: 1 }]);
		});
	}
});

describe("what the store holds", () => {
	for (const kind of ["memory", "file"] as const) {
		it(`stores a message put in state.messages during a run by the run's end (${kind} store)`, async () => {
			const memory = createMemoryStore();
			const store = kind === "memory" ? () => memory : (await fileStore()).store;
			const scripted = createScriptedModel([{ content: "first" }, { content: "second", delayMs: 20 }]);
			const agent = new Agent({ sessionId: "s", store: store(), initialState: { model: scripted.model }, streamFn: scripted.streamFn });
			await agent.prompt("one");
			const run = agent.prompt("two");
			await until(() => agent.state.isStreaming && agent.state.streamingMessage !== undefined, "the second reply");
			const note: AgentMessage = { role: "user", content: "a note", timestamp: Date.now() };
			agent.state.messages = [...agent.state.messages, note];
			await run;
			await agent.saved();
			const expected = ["user: one", "assistant: first", "user: two", "user: a note", "assistant: second"];
			expect(brief(agent.state.messages)).toEqual(expected);
			agent.dispose();
			const loaded = await Agent.load({ sessionId: "s", store: store(), initialState: {}, streamFn: scripted.streamFn });
			await loaded.waitForIdle();
			expect(brief(loaded.state.messages)).toEqual(expected);
			expect(loaded.storeProblems).toEqual([]);
		});
	}

	it("an agent loaded from the memory store changes nothing the store holds", async () => {
		const store = createMemoryStore();
		const scripted = createScriptedModel([{ content: "first" }]);
		const agent = new Agent({ sessionId: "s", store, initialState: { model: scripted.model }, streamFn: scripted.streamFn });
		await agent.prompt("one");
		await agent.saved();
		agent.dispose();
		const loaded = await Agent.load({ sessionId: "s", store, initialState: {}, streamFn: scripted.streamFn });
		const prompt = loaded.state.messages[0] as { content: unknown };
		prompt.content = "changed in place";
		const again = await store.load("s");
		expect(JSON.stringify(again?.snapshot)).not.toContain("changed in place");
	});
});
