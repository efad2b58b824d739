/**
 * Defects an adversarial probe of durable runs and approval found (2026-12-07), each fixed, each
 * test failing before its fix:
 * - the memory store's load copied with a structured clone: a function or symbol in a tool
 *   result's details made the session unloadable, and a Date, a Map or NaN came back as they were
 *   where the file store gives JSON's reading (the docs promise both stores treat them alike);
 * - reading `agent.actor` while a setting was invalid made a machine that failed at its start:
 *   the agent took no run after the setting was put right, and `snapshot()`, which its error
 *   named as the way out, threw too;
 * - a snapshot edited by hand could hand a tool arguments its own schema rejects: arguments were
 *   validated again on restore only for a tool whose schema had changed;
 * - `approve(id, { arguments: { to: undefined } })` passed a required `to` as `""`;
 * - a damaged journal line in the middle of the file was reported as "a write cut short".
 */
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { Agent } from "../../src/agent.js";
import { createFileStore } from "../../src/durable/file-store.js";
import { type AgentStore, createMemoryStore } from "../../src/durable/store.js";
import { createScriptedModel, toolCall } from "../../src/providers/scripted.js";
import { makeTool, ok, sleep } from "../agent/helpers.js";
import { storedAndLoaded } from "./stored-details.js";

const folders: string[] = [];
afterEach(async () => {
	for (const folder of folders.splice(0)) await rm(folder, { recursive: true, force: true });
});

async function tempFolder(): Promise<string> {
	const folder = await mkdtemp(join(tmpdir(), "agentchart-probe4-"));
	folders.push(folder);
	return folder;
}

async function until(condition: () => boolean, what: string): Promise<void> {
	for (let i = 0; i < 1000; i++) {
		if (condition()) return;
		await sleep(2);
	}
	throw new Error(`timed out waiting for ${what}`);
}

const toSchema = { type: "object", properties: { to: { type: "string" } }, required: ["to"] } as const;

describe("the memory store reads back what the file store would", () => {
	const odd = () => ({ onClick() {}, kind: Symbol("x"), at: new Date(0), map: new Map([["k", 1]]), ratio: Number.NaN, gone: undefined, kept: "yes" });

	for (const which of ["memory", "file"] as const) {
		it(`a tool result's details with a function, a symbol, a Date, a Map and NaN load as JSON reads them (${which} store)`, async () => {
			const store: AgentStore = which === "memory" ? createMemoryStore() : createFileStore(await tempFolder(), { fsync: "never" });
			const result = (await storedAndLoaded(store, odd())).find((message) => message.role === "toolResult");
			expect((result as { details?: unknown }).details).toEqual({ at: "1970-01-01T00:00:00.000Z", map: {}, ratio: null, kept: "yes" });
		});
	}
});

describe("agent.actor with a setting no run can use", () => {
	it("throws the TypeError naming it, makes no machine, and the agent runs once the setting is put right", async () => {
		const scripted = createScriptedModel([{ content: "done" }]);
		const agent = new Agent({ initialState: { model: scripted.model }, streamFn: scripted.streamFn, approvalTimeoutMs: -1 });
		expect(() => agent.actor).toThrow(new TypeError("agent.approvalTimeoutMs must be a number of milliseconds, at least 0, got -1"));
		agent.approvalTimeoutMs = 60_000;
		expect(agent.snapshot().machine.value).toBe("idle");
		expect(agent.actor.getSnapshot().status).toBe("active");
		await agent.prompt("go");
		expect(agent.state.messages.map((message) => message.role)).toEqual(["user", "assistant"]);
	});

	it("after a run, with a store: the session stays writable", async () => {
		const store = createMemoryStore();
		const scripted = createScriptedModel([{ content: "one" }, { content: "two" }]);
		const agent = new Agent({ store, sessionId: "s", initialState: { model: scripted.model }, streamFn: scripted.streamFn });
		await agent.prompt("first");
		agent.toolTimeoutMs = -5;
		expect(() => agent.actor).toThrow(/agent\.toolTimeoutMs must be a number of milliseconds, at least 0, got -5/);
		agent.toolTimeoutMs = 1_000;
		await agent.save();
		await agent.prompt("second");
		await agent.saved();
		expect(agent.storeProblems).toEqual([]);
		expect((await Agent.load({ store, sessionId: "s" })).state.messages).toHaveLength(4);
	});
});

describe("a snapshot edited by hand", () => {
	/** An agent restored from a snapshot taken while `send` waited for approval, its stored arguments edited to `args`; `seen` gets what the tool runs with. */
	async function restoredWithArguments(args: unknown): Promise<{ restored: Agent; seen: unknown[] }> {
		const seen: unknown[] = [];
		const send = makeTool("send", async (_id, given) => (seen.push(given), ok("sent")), { needsApproval: true, parameters: toSchema });
		const scripted = createScriptedModel([{ content: [toolCall("send", { to: "bob" }, "a")] }, { content: "done" }]);
		const first = new Agent({ initialState: { model: scripted.model, tools: [send] }, streamFn: scripted.streamFn });
		const run = first.prompt("go");
		await until(() => first.pendingApprovals.length === 1, "the approval");
		const snapshot = JSON.parse(JSON.stringify(first.snapshot()));
		first.abort();
		await run;
		snapshot.machine.context.run.batch.calls[0].args = args;
		return { restored: Agent.restore(snapshot, { initialState: { tools: [send] }, streamFn: createScriptedModel([{ content: "done" }]).streamFn }), seen };
	}

	for (const edited of ["oops", { to: { nested: true } }, {}] as const) {
		it(`a waiting call whose stored arguments are ${JSON.stringify(edited)} never runs with them`, async () => {
			const { restored, seen } = await restoredWithArguments(edited);
			expect(restored.pendingApprovals[0]?.argsProblem).toMatch(/Validation failed for tool "send"/);
			expect(() => restored.approve("a")).toThrow(/does not accept its stored arguments \(the tool changed since the call was asked, or the snapshot was edited\)/);
			await restored.approve("a", { arguments: { to: "carol" } });
			await restored.waitForIdle();
			expect(seen).toEqual([{ to: "carol" }]);
		});
	}

	it("stored arguments the schema coerces are coerced, as a model's are", async () => {
		const { restored, seen } = await restoredWithArguments({ to: 42 });
		await restored.approve("a");
		await restored.waitForIdle();
		expect(seen).toEqual([{ to: "42" }]);
	});
});

describe("approve(id, { arguments }) reads them as the JSON a model sends", () => {
	for (const stored of [false, true]) {
		it(`a required field set to undefined is missing, not "" (${stored ? "with" : "without"} a store)`, async () => {
			const seen: unknown[] = [];
			const send = makeTool("send", async (_id, args) => (seen.push(args), ok("sent")), { needsApproval: true, parameters: toSchema });
			const scripted = createScriptedModel([{ content: [toolCall("send", { to: "bob" }, "a")] }, { content: "done" }]);
			const agent = new Agent({ ...(stored ? { store: createMemoryStore(), sessionId: "s" } : {}), initialState: { model: scripted.model, tools: [send] }, streamFn: scripted.streamFn });
			const run = agent.prompt("go");
			await until(() => agent.pendingApprovals.length === 1, "the approval");
			expect(() => agent.approve("a", { arguments: { to: undefined } })).toThrow(/Validation failed for tool "send":\n {2}- root: must have required properties to/);
			expect(agent.pendingApprovals.map((call) => call.toolCallId)).toEqual(["a"]);
			await agent.approve("a", { arguments: { to: "carol", cc: undefined } });
			await run;
			expect(seen).toEqual([{ to: "carol" }]);
			expect(Object.keys(seen[0] as object)).toEqual(["to"]);
		});
	}
});

describe("a damaged journal line in the middle of the file", () => {
	it("is reported as damage, not as a write cut short", async () => {
		const folder = await tempFolder();
		const store = createFileStore(folder, { fsync: "never" });
		const scripted = createScriptedModel([{ content: "one" }, { content: "two" }]);
		const agent = new Agent({ store, sessionId: "s", initialState: { model: scripted.model }, streamFn: scripted.streamFn });
		await agent.prompt("first");
		await agent.prompt("second");
		await agent.saved();
		const journal = join(store.directoryOf("s"), "journal.jsonl");
		const lines = (await readFile(journal, "utf8")).split("\n");
		expect(lines.length).toBeGreaterThan(2);
		lines[0] = `${lines[0]?.slice(0, 20)}X${lines[0]?.slice(21)}`;
		await writeFile(journal, lines.join("\n"));
		const loaded = await store.load("s");
		expect(loaded?.problems.join("\n")).toMatch(/journal\.jsonl: line 1 does not check \(damaged: more than an append a crash cut short\); it and \d+ after it were left out/);
	});
});
