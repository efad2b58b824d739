/**
 * The snapshot's shape check knows every field of the chart's context: each field of the
 * context, the run, the tool batch and a call is checked, or listed here with why it needs no
 * check. A field added to the chart without either fails here, instead of a damaged snapshot
 * reaching the chart with a value no check looked at. A damaged field is refused with its path
 * and what it must be; what the chart stores (a call still being prepared, a machine that ended
 * between runs) is let through.
 */
import { readFile } from "node:fs/promises";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { Agent } from "../../src/agent.js";
import { JOURNAL_ENTRY_CHECKED_FIELDS, SNAPSHOT_CHECKED_FIELDS } from "../../src/durable/snapshot-shape.js";
import type { AgentSnapshot } from "../../src/durable/snapshot.js";
import { createMemoryStore } from "../../src/durable/store.js";
import { withInterpreter } from "../../src/machines/agent-logic.js";
import { createScriptedModel, toolCall } from "../../src/providers/scripted.js";
import { deferred, makeTool, ok, throughJson, thrownBy } from "../agent/helpers.js";

/** Fields a snapshot keeps that the check does not read, and why. */
const UNCHECKED: Record<keyof typeof SNAPSHOT_CHECKED_FIELDS, Record<string, string>> = {
	context: {},
	run: {
		controller: "not in a snapshot: a restored run gets a new one",
		stream: "not in a snapshot: a restored stream starts again",
	},
	batch: {},
	call: {
		args: "any value a tool's arguments can be; a restored call's tool gets them as they were stored",
	},
};

/** Fields of a journal entry, per kind and phase, that the check does not read, and why. */
const UNCHECKED_ENTRY_FIELDS: Record<string, Record<string, string>> = {
	"tool.intent": { args: "any value a tool's arguments can be; a restored call runs with them as they were stored" },
	"tool.update": { partialResult: "what the tool passed to onUpdate, unchecked then too; an interrupted call's answer reads it as loosely" },
	"approval.requested": { args: "any value a tool's arguments can be, shown to the person as stored" },
	"approval.decided": { args: "any value a tool's arguments can be, the person's change to them" },
};

async function sourceFile(relative: string): Promise<ts.SourceFile> {
	const path = new URL(relative, import.meta.url);
	return ts.createSourceFile(path.pathname, await readFile(path, "utf8"), ts.ScriptTarget.Latest, true);
}

/** The members an interface of src/machines/types.ts declares, with those of the interfaces it extends there. */
async function declaredFields(name: string): Promise<string[]> {
	const file = await sourceFile("../../src/machines/types.ts");
	const interfaces = new Map(file.statements.filter(ts.isInterfaceDeclaration).map((statement) => [statement.name.text, statement]));
	const collect = (interfaceName: string): string[] => {
		const found = interfaces.get(interfaceName);
		if (!found) return [];
		const own = found.members.filter(ts.isPropertySignature).flatMap((member) => (ts.isIdentifier(member.name) ? [member.name.text] : []));
		const inherited = (found.heritageClauses ?? []).flatMap((clause) => clause.types.flatMap((type) => (ts.isIdentifier(type.expression) ? collect(type.expression.text) : [])));
		return [...inherited, ...own];
	};
	const fields = collect(name);
	if (fields.length === 0) throw new Error(`no interface ${name} in src/machines/types.ts`);
	return fields;
}

describe("the snapshot's shape check", () => {
	const parts = [
		["context", "AgentMachineContext"],
		["run", "RunContext"],
		["batch", "ToolBatch"],
		["call", "ToolCallEntry"],
	] as const;
	for (const [part, type] of parts) {
		it(`checks every field of ${type}, or says why not`, async () => {
			const declared = await declaredFields(type);
			const known = [...SNAPSHOT_CHECKED_FIELDS[part], ...Object.keys(UNCHECKED[part])];
			expect(declared.filter((field) => !known.includes(field)), "fields neither checked nor listed as unchecked").toEqual([]);
			expect(known.filter((field) => !declared.includes(field)), "checked or listed fields the type no longer has").toEqual([]);
		});
	}

	it("checks every kind of journal entry journal.ts declares, and every field of each, or says why not", async () => {
		const file = await sourceFile("../../src/durable/journal.ts");
		const union = file.statements.find((statement): statement is ts.TypeAliasDeclaration => ts.isTypeAliasDeclaration(statement) && statement.name.text === "JournalEntry");
		expect(union && ts.isUnionTypeNode(union.type)).toBe(true);
		const members = (union?.type as ts.UnionTypeNode).types.map((type) => type.getText(file));
		const interfaces = new Map(file.statements.filter(ts.isInterfaceDeclaration).map((statement) => [statement.name.text, statement]));
		const declared: Record<string, string[]> = {};
		for (const name of members) {
			const properties = (interfaces.get(name)?.members ?? ts.factory.createNodeArray<ts.TypeElement>()).filter(ts.isPropertySignature);
			const literal = (field: string) => properties.find((member) => member.name.getText(file) === field)?.type?.getText(file).replaceAll('"', "");
			declared[`${literal("kind")}.${literal("phase")}`] = [...properties.map((member) => member.name.getText(file)), "seq", "lineage"];
		}
		expect(Object.keys(declared).sort(), "kinds and phases the check knows").toEqual(Object.keys(JOURNAL_ENTRY_CHECKED_FIELDS).sort());
		for (const [entry, fields] of Object.entries(declared)) {
			const known = [...(JOURNAL_ENTRY_CHECKED_FIELDS[entry] ?? []), ...Object.keys(UNCHECKED_ENTRY_FIELDS[entry] ?? {})];
			expect(fields.filter((field) => !known.includes(field)), `${entry}: fields neither checked nor listed as unchecked`).toEqual([]);
			expect(known.filter((field) => !fields.includes(field)), `${entry}: checked or listed fields the entry no longer has`).toEqual([]);
		}
	});

	it("refuses a run whose compaction reason is not one the chart has", async () => {
		const tool = makeTool("send", async () => ok("sent"), { needsApproval: true });
		const scripted = createScriptedModel([{ content: [toolCall("send", {}, "a")] }, { content: "done" }]);
		const agent = new Agent({ initialState: { model: scripted.model, tools: [tool] }, streamFn: scripted.streamFn });
		const asked = deferred<void>();
		agent.subscribe((event) => {
			if (event.type === "approval_requested") asked.resolve();
		});
		const run = agent.prompt("go");
		await asked.promise;
		const snapshot = JSON.parse(JSON.stringify(agent.snapshot())) as AgentSnapshot;
		agent.abort();
		await run;
		const damaged = JSON.parse(JSON.stringify(snapshot)) as { machine: { context: { run: Record<string, unknown> } } };
		damaged.machine.context.run["compactionReason"] = "bogus";
		const options = { initialState: { tools: [tool] }, streamFn: createScriptedModel([{ content: "done" }]).streamFn };
		expect(thrownBy(() => Agent.restore(damaged as unknown as AgentSnapshot, options))).toMatch(/the snapshot's machine\.context\.run\.compactionReason must be "threshold" or "overflow" or "manual", not "bogus"/);
		Agent.restore(snapshot, options).dispose();
	});
});


/** A run of an agent with a store waiting for approval of call "a" of `send`: its snapshot (with the run's journal), and options that restore it. */
async function waitingWithJournal() {
	const tool = makeTool("send", async () => ok("sent"), { needsApproval: true });
	const scripted = createScriptedModel([{ content: [toolCall("send", { to: "bob" }, "a")] }, { content: "done" }]);
	const agent = new Agent({ initialState: { model: scripted.model, tools: [tool] }, streamFn: scripted.streamFn, store: createMemoryStore(), sessionId: "s" });
	const asked = deferred<void>();
	agent.subscribe((event) => void (event.type === "approval_requested" && asked.resolve()));
	const run = agent.prompt("go");
	await asked.promise;
	const snapshot = throughJson(agent.snapshot());
	agent.dispose();
	await run;
	return { snapshot, options: { initialState: { tools: [tool] }, streamFn: createScriptedModel([{ content: "done" }]).streamFn } };
}

/**
 * Restores `snapshot` (waiting for the approval of call "a"), restores the restored agent's own
 * snapshot again, approves the call and checks that the run ends with the call answered once.
 */
async function finishesAfterApproval(snapshot: AgentSnapshot, options: Awaited<ReturnType<typeof waitingWithJournal>>["options"]): Promise<void> {
	const first = Agent.restore(snapshot, options);
	expect(first.pendingApprovals.map((approval) => approval.toolCallId)).toEqual(["a"]);
	const again = throughJson(first.snapshot());
	first.dispose();
	const agent = Agent.restore(again, options);
	agent.approve("a");
	await agent.waitForIdle();
	const results = agent.state.messages.filter((message) => message.role === "toolResult");
	expect(results.map((message) => [message.toolCallId, message.isError])).toEqual([["a", false]]);
	expect(agent.state.messages.at(-1)).toMatchObject({ role: "assistant", stopReason: "stop" });
	agent.dispose();
}

/** Sets (or, given `undefined`, deletes) the field at `path` (keys and list indexes joined by dots) of a JSON value. */
function damageAt(value: unknown, path: string, wrong: unknown): void {
	const keys = path.split(".");
	const last = keys.pop() as string;
	const parent = keys.reduce((node, key) => (node as Record<string, unknown>)[key], value) as Record<string, unknown>;
	if (wrong === undefined) delete parent[last];
	else parent[last] = wrong;
}

describe("a damaged snapshot", () => {
	// The path of a field, where a journal entry is named by its kind and phase; then the wrong value; then what it must be.
	const damages: [string, unknown, string][] = [
		["machine.context.systemPrompt", 5, "a string, not 5"],
		["machine.context.model.id", undefined, "a string, not undefined"],
		["machine.context.tools.0.name", 5, "a string, not 5"],
		["machine.context.config", [], "an object, not []"],
		["machine.context.run.turn", "2", 'a number, not "2"'],
		["machine.context.run.turn", Number.NaN, "a number, not NaN"],
		["machine.context.run.aborted", "yes", 'true or false, not "yes"'],
		["machine.context.run.batch.calls.0.toolCall.id", 5, "a string, not 5"],
		["machine.context.run.batch.calls.0.approval", { deadline: "soon" }, 'a number, not "soon"'],
		["machine.value", 5, "a state (a name, or an object of names), not 5"],
		// Found by the damage property: the chart met it unchecked ("Cannot convert undefined or null to object").
		["machine.value.running", null, "a state (a name, or an object of names), not null"],
		// Found by the damage property on XState's interpreter: its restore threw "arr is not iterable".
		["machine.historyValue", [false], "an object, not [ false ]"],
		["agent.errorMessage", 5, "a string, not 5"],
		["agent.abortPending", "yes", 'true or false, not "yes"'],
		["journal.approval.requested.phase", "retry", '"requested" or "decided", not "retry"'],
		["journal.approval.requested.call.name", undefined, "a string, not undefined"],
	];

	it.each(damages)("is refused, naming the field and what it must be: %s = %j", async (path, wrong, expected) => {
		const { snapshot, options } = await waitingWithJournal();
		const asked = snapshot.journal.findIndex((entry) => entry.kind === "approval" && entry.phase === "requested");
		const at = path.replace("approval.requested", String(asked));
		const damaged = throughJson(snapshot);
		damageAt(damaged, at, wrong);
		// The field named as a path: list indexes in brackets; a damaged approval names its deadline.
		const named = at.replace(/\.(\d+)/g, "[$1]").replace(/approval$/, "approval.deadline");
		expect(thrownBy(() => Agent.restore(damaged, options))).toBe(`agentchart: the snapshot's ${named} must be ${expected}`);
		Agent.restore(snapshot, options).dispose();
	});
});

// Found by the damage property made to run the restored agent to its end: each restored, and the run waited or went round for ever.
describe("a snapshot whose counters or state its journal contradicts", () => {
	// The path of a field, the wrong value, and the error. The snapshot waits for approval of call "a" of run 1's first turn, after its first model call.
	const damages: [string, unknown, string][] = [
		// The next model call took the id r1.m1 again: the journal replayed the first reply, which asked the same approval again.
		["machine.context.run.attempt", 0, "machine.context.run.attempt must be at least 1 (its journal holds the model call r1.m1 before r1.t1.a, an effect the run has made), not 0"],
		["machine.context.run.turn", 0, "machine.context.run.turn must be at least 1 (its journal holds r1.t1.a, a call of turn 1, with no model call past the run's attempt before it), not 0"],
		["machine.context.runs", 0, 'machine.context.run.id must be "r0", the run machine.context.runs counts, not "r1"'],
		["machine.context.run.id", "r7", 'machine.context.run.id must be "r1", the run machine.context.runs counts, not "r7"'],
		["machine.context.run.id", "x", 'machine.context.run.id must be "r1", the run machine.context.runs counts, not "x"'],
	];

	it.each(damages)("is refused, naming the counter: %s = %j", async (path, wrong, expected) => {
		const { snapshot, options } = await waitingWithJournal();
		const damaged = throughJson(snapshot);
		damageAt(damaged, path, wrong);
		expect(thrownBy(() => Agent.restore(damaged, options))).toBe(`agentchart: the snapshot's ${expected}`);
		Agent.restore(snapshot, options).dispose();
	});

	it("is refused when its runs counter is behind a run its journal holds", async () => {
		const { snapshot, options } = await waitingWithJournal();
		const damaged = throughJson(snapshot);
		// Runs 0 and 1 are counted; the journal's entries say run 2 had started.
		for (const entry of damaged.journal) entry.effect = entry.effect.replace(/^r1/, "r2");
		expect(thrownBy(() => Agent.restore(damaged, options))).toBe("agentchart: the snapshot's machine.context.runs must be at least 2 (its journal holds r2), not 1");
	});

	// Found by the damage property: with the call's question moved after journalSeq, the entries it had seen ended with the set-back
	// counter's model call, and the restored agent's own snapshot, which had seen the question too, was refused.
	it("is refused when a counter set back is shown by a later entry of an effect the run had made", async () => {
		const { snapshot, options } = await waitingWithJournal();
		const damaged = throughJson(snapshot);
		damageAt(damaged, "machine.context.run.attempt", 0);
		const asked = damaged.journal.find((entry) => entry.kind === "approval" && entry.phase === "requested");
		if (!asked) throw new Error("the run asked no approval");
		asked.seq = damaged.journalSeq + 1;
		expect(thrownBy(() => Agent.restore(damaged, options))).toBe("agentchart: the snapshot's machine.context.run.attempt must be at least 1 (its journal holds the model call r1.m1 before r1.t1.a, an effect the run has made), not 0");
	});

	it("counts only the entries it had seen: a store's later entries are past its counters", async () => {
		const { snapshot, options } = await waitingWithJournal();
		const later = throughJson(snapshot);
		const last = later.journal.at(-1);
		if (!last) throw new Error("the run's journal is empty");
		later.journal.push({ ...last, seq: later.journalSeq + 1, effect: "r1.m9" });
		// Taken, and so is the restored agent's own snapshot (which has seen the entry); the run goes on.
		await finishesAfterApproval(later, options);
	});

	it.each([
		[{}, "the chart"],
		[{ running: {} }, "running"],
		["running", "running"],
		[{ running: "streaming", idle: {} }, "the chart"],
	])("is refused when its state value %j is in no state of %s", async (value, where) => {
		const { snapshot, options } = await waitingWithJournal();
		const damaged = throughJson(snapshot) as unknown as { machine: { value: unknown } };
		damaged.machine.value = value;
		expect(thrownBy(() => Agent.restore(damaged as unknown as AgentSnapshot, options))).toBe(`agentchart: the snapshot's machine.value (${JSON.stringify(value)}) is in no state of ${where} (the chart's own snapshots are always in one): it was edited or damaged`);
	});
});

describe("a damaged child of the machine (a model call or a batch of tool calls it had running)", () => {
	// Found by the damage property: restored, the agent's next snapshot failed with a TypeError.
	it.each([
		["that is not an object", false, 'the snapshot\'s machine.children["stray"] must be an object, not false'],
		["without its logic's name", { snapshot: {} }, 'the snapshot\'s machine.children["stray"].src must be a string, not undefined'],
	])("is refused, named: one %s", async (_what, child, message) => {
		const { snapshot, options } = await waitingWithJournal();
		const damaged = throughJson(snapshot) as unknown as { machine: { children: Record<string, unknown> } };
		damaged.machine.children = { ...damaged.machine.children, stray: child };
		expect(thrownBy(() => Agent.restore(damaged as unknown as AgentSnapshot, options))).toBe(`agentchart: ${message}`);
	});
});

/**
 * A snapshot taken while tool "look" (not replay-safe) runs call "a": the machine has its batch of
 * calls as a child ("tools"); with a store, the call's intent is journaled (`r1.t1.a`). The
 * options restore it with a "look" that counts its runs in `runs`.
 */
async function runningToolSnapshot(stored = false) {
	const started = deferred<void>();
	const release = deferred<void>();
	const look = makeTool("look", async () => {
		started.resolve();
		await release.promise;
		return ok("seen");
	});
	const scripted = createScriptedModel([{ content: [toolCall("look", {}, "a")] }, { content: "done" }]);
	const agent = new Agent({ initialState: { model: scripted.model, tools: [look] }, streamFn: scripted.streamFn, ...(stored ? { store: createMemoryStore(), sessionId: "s" } : {}) });
	const run = agent.prompt("go");
	await started.promise;
	const snapshot = throughJson(agent.snapshot());
	agent.dispose();
	release.resolve();
	await run;
	const runs: string[] = [];
	const counted = makeTool("look", async (id) => (runs.push(id), ok("seen again")));
	return { snapshot, runs, options: { initialState: { tools: [counted] }, streamFn: createScriptedModel([{ content: "done" }]).streamFn } };
}

describe("a run's snapshot without an actor its state runs", () => {
	// Found by the damage property: restored, the run waited for ever for an actor that was not there.
	it.each([
		["removed", undefined],
		["written in as stopped", "stopped"],
		// The restore skips a child of a logic other than the one the chart runs there.
		["stored as another logic", "streamActor"],
	])("is refused, naming the actor: its batch of tool calls %s", async (_what, change) => {
		const { snapshot, options } = await runningToolSnapshot();
		expect(Object.keys(snapshot.machine.children ?? {})).toEqual(["tools"]);
		const damaged = throughJson(snapshot) as unknown as { machine: { children: Record<string, { src: string; snapshot: { status: string } }> } };
		const tools = damaged.machine.children["tools"] as { src: string; snapshot: { status: string } };
		if (change === undefined) damaged.machine.children = {};
		else if (change === "stopped") tools.snapshot.status = change;
		else tools.src = change;
		expect(thrownBy(() => Agent.restore(damaged as unknown as AgentSnapshot, options))).toMatch(/^agentchart: the snapshot's machine\.children has no running "tools", which runs the batch of tool calls its state running\.tool-executing waits for/);
		Agent.restore(snapshot, options).dispose();
	});

	// Our interpreter put a child named "__proto__" (an own key of parsed JSON) in as the children's
	// prototype and then walked its fields as children: the restore threw a TypeError.
	it("restores a snapshot with a child named \"__proto__\" without it, as XState does, and runs it to its end", async () => {
		const { snapshot, options } = await runningToolSnapshot();
		const text = JSON.stringify(snapshot).replace('"children":{', '"children":{"__proto__":{"src":"toolBatchActor","snapshot":{"status":"active","input":{"restored":true}}},');
		const damaged = JSON.parse(text) as AgentSnapshot;
		expect(Object.keys(damaged.machine?.children ?? {})).toEqual(["__proto__", "tools"]);
		const agent = Agent.restore(damaged, options);
		expect(Object.keys(agent.snapshot().machine?.children ?? {})).toEqual(["tools"]);
		await agent.waitForIdle();
		expect(agent.state.messages.at(-1)).toMatchObject({ role: "assistant", content: [{ type: "text", text: "done" }] });
		agent.dispose();
	});

	// Found by the damage property with names every object has among its values: the check of the
	// state value looked "constructor" up among the chart's states and tripped over Object; and on
	// XState's interpreter a snapshot waiting for approval restored with that value, and its run
	// waited for ever (XState's lookup finds the name too).
	it.each([
		["a tool running", "constructor", "the chart"],
		["a tool running", { running: "toString" }, "running"],
		["a tool running", { constructor: "x" }, "the chart"],
		["waiting for approval", "constructor", "the chart"],
		["waiting for approval", { running: "__proto__" }, "running"],
	])("is refused when %s, its state value %j naming a state as a property every object has", async (where, value, of) => {
		const { snapshot, options } = where === "a tool running" ? await runningToolSnapshot() : await waitingWithJournal();
		const damaged = throughJson(snapshot) as unknown as { machine: { value: unknown } };
		damaged.machine.value = value;
		expect(thrownBy(() => Agent.restore(damaged as unknown as AgentSnapshot, options))).toBe(
			`agentchart: the snapshot's machine.value (${JSON.stringify(value)}) is in no state of ${of} (the chart's own snapshots are always in one): it was edited or damaged`,
		);
	});

	// XState reads a child's logic by its name as any property: "constructor" found Object, the
	// restore went through, and every later snapshot of the agent threw (its child had no
	// getPersistedSnapshot); "__proto__" threw a TypeError from the restore's own check.
	it.each(["constructor", "toString", "__proto__"])("is refused, naming the child, when a child's logic is named %s (a name every object has)", async (name) => {
		const { snapshot, options } = await runningToolSnapshot();
		const damaged = throughJson(snapshot) as unknown as { machine: { children: Record<string, { src: string }> } };
		const tools = damaged.machine.children["tools"] as { src: string };
		damaged.machine.children["extra"] = { ...tools, src: name };
		expect(thrownBy(() => Agent.restore(damaged as unknown as AgentSnapshot, options))).toBe(
			`agentchart: the snapshot's machine.children["extra"].src (${JSON.stringify(name)}) names none of the chart's actors (streamActor, toolBatchActor, compactionActor, queuePollActor, stopCheckActor): it was edited or damaged`,
		);
		// A child of a logic the chart does not have is skipped, as XState skips it.
		damaged.machine.children["extra"] = { ...tools, src: "notAnActor" };
		const restored = Agent.restore(damaged as unknown as AgentSnapshot, options);
		expect(Object.keys(restored.snapshot().machine?.children ?? {})).toEqual(["tools"]);
		restored.dispose();
	});

	// Found by the damage property run to its end: restored, the calls in flight went to no batch actor, and the run waited for ever.
	it("is refused when a call runs in a batch not marked as started", async () => {
		const { snapshot, options } = await runningToolSnapshot();
		const damaged = throughJson(snapshot) as unknown as { machine: { context: { run: { batch: Record<string, unknown> } } } };
		delete damaged.machine.context.run.batch["actorStarted"];
		expect(thrownBy(() => Agent.restore(damaged as unknown as AgentSnapshot, options))).toMatch(/^agentchart: the snapshot's machine\.context\.run\.batch\.actorStarted must be true, as its call "a" is running .*, not undefined/);
	});

	// Found by the damage property run to its end: restored with another input, the batch actor started as a new one and told the chart nothing.
	it.each([[{}], [[]], [{ restored: false }]])("is refused when its batch actor's stored input is %j, not the marker of calls in flight", async (input) => {
		const { snapshot, options } = await runningToolSnapshot();
		const damaged = throughJson(snapshot) as unknown as { machine: { children: Record<string, { snapshot: { input: unknown } }> } };
		(damaged.machine.children["tools"] as { snapshot: { input: unknown } }).snapshot.input = input;
		expect(thrownBy(() => Agent.restore(damaged as unknown as AgentSnapshot, options))).toMatch(/^agentchart: the snapshot's machine\.children\["tools"\]\.snapshot\.input is not what the chart stores for a toolBatchActor in flight/);
	});

	it("is refused when its model call's stored attempt is not the run's (the chart would take its report as stale)", async () => {
		const { snapshot, options } = await runningToolSnapshot();
		const streaming = throughJson(snapshot) as unknown as { machine: { value: unknown; context: { run: { attempt: number; batch?: unknown } }; children: Record<string, unknown> } };
		streaming.machine.value = { running: "streaming" };
		delete streaming.machine.context.run.batch;
		const attempt = streaming.machine.context.run.attempt;
		streaming.machine.children = { stream: { src: "streamActor", snapshot: { status: "active", input: { restored: true, attempt } } } };
		// As the chart stores it, it restores; an attempt set back is refused.
		Agent.restore(streaming as unknown as AgentSnapshot, options).dispose();
		streaming.machine.children = { stream: { src: "streamActor", snapshot: { status: "active", input: { restored: true, attempt: attempt - 1 } } } };
		expect(thrownBy(() => Agent.restore(streaming as unknown as AgentSnapshot, options))).toMatch(/^agentchart: the snapshot's machine\.children\["stream"\]\.snapshot\.input is not what the chart stores for a streamActor in flight/);
	});

	it("is refused, naming the actor and the state: a model call's stream", async () => {
		const { snapshot, options } = await runningToolSnapshot();
		const streaming = throughJson(snapshot) as unknown as { machine: { value: unknown; children: Record<string, unknown> } };
		streaming.machine.value = { running: "streaming" };
		expect(thrownBy(() => Agent.restore(streaming as unknown as AgentSnapshot, options))).toMatch(/^agentchart: the snapshot's machine\.children has no running "stream", which its state running\.streaming runs/);
	});
});

describe("a snapshot the shape check lets through", () => {
	// Found by the damage property on XState's interpreter: its restore threw "Cannot convert undefined or null to object".
	it.each(["agentchart", "xstate"] as const)("has no record of children (a run with no actor running): it restores on %s's interpreter", async (interpreter) => {
		const { snapshot, options } = await waitingWithJournal();
		expect(snapshot.machine.children).toEqual({});
		const { children: _children, ...machine } = snapshot.machine;
		const restored = withInterpreter(interpreter, () => Agent.restore({ ...snapshot, machine } as AgentSnapshot, options));
		expect(restored.pendingApprovals.map((approval) => approval.toolCallId)).toEqual(["a"]);
		restored.dispose();
	});

	it("has a call still being prepared (its beforeToolCall hook deciding): the restore prepares it again", async () => {
		const deciding = deferred<void>();
		const tool = makeTool("send", async () => ok("sent"));
		const scripted = createScriptedModel([{ content: [toolCall("send", {}, "a")] }, { content: "done" }]);
		const agent = new Agent({
			initialState: { model: scripted.model, tools: [tool] },
			streamFn: scripted.streamFn,
			beforeToolCall: async () => {
				deciding.resolve();
				return new Promise<undefined>(() => {});
			},
		});
		const run = agent.prompt("go");
		await deciding.promise;
		const snapshot = throughJson(agent.snapshot());
		expect(snapshot.machine.context.run?.batch?.calls.map((call) => call.status)).toEqual(["preparing"]);
		agent.dispose();
		await run;
		const restored = Agent.restore(snapshot, { initialState: { tools: [tool] }, streamFn: createScriptedModel([{ content: "done" }]).streamFn });
		await restored.waitForIdle();
		expect(restored.state.messages.map((message) => message.role)).toEqual(["user", "assistant", "toolResult", "assistant"]);
	});

	it("is of a machine that ended between runs (no run, its state not idle): its state is not read", () => {
		const scripted = createScriptedModel([]);
		const snapshot = throughJson(new Agent({ initialState: { model: scripted.model, messages: [{ role: "user", content: "hi", timestamp: 1 }] } }).snapshot());
		const ended = { ...snapshot, machine: { ...snapshot.machine, status: "done", value: "ended" } } as AgentSnapshot;
		expect(Agent.restore(ended, {}).state.messages).toEqual(snapshot.machine.context.messages);
	});
});

// Found by reading the restore (the damage property, which now counts tool runs, finds it too): a counter
// set forward while a call ran made the restore look up the call under an id the journal does not have,
// and a tool without `replay: "safe"` ran again.
describe("a snapshot whose batch of calls was made under other counters than its run's", () => {
	async function journaledRunningTool() {
		const running = await runningToolSnapshot(true);
		expect(running.snapshot.journal.some((entry) => entry.kind === "tool" && entry.phase === "intent" && entry.effect === "r1.t1.a")).toBe(true);
		return running;
	}

	it("restores as the chart stored it: the call is answered as interrupted, not run again", async () => {
		const { snapshot, runs, options } = await journaledRunningTool();
		expect(snapshot.version).toBe(3);
		expect(snapshot.machine.context.run?.batch?.effectPrefix).toBe("r1.t1");
		const agent = Agent.restore(snapshot, options);
		await agent.waitForIdle();
		expect(runs).toEqual([]);
		expect(JSON.stringify(agent.state.messages)).toMatch(/interrupted/);
	});

	it.each([
		["its turn set forward", { "machine.context.run.turn": 5 }, '"r1.t1") is not the one machine.context.run.id and .turn make ("r1.t5"'],
		["its run renumbered forward", { "machine.context.runs": 5, "machine.context.run.id": "r5" }, '"r1.t1") is not the one machine.context.run.id and .turn make ("r5.t1"'],
		["its prefix edited", { "machine.context.run.batch.effectPrefix": "r1.t2" }, '"r1.t2") is not the one machine.context.run.id and .turn make ("r1.t1"'],
	])("is refused: %s", async (_what, edits, expected) => {
		const { snapshot, runs, options } = await journaledRunningTool();
		const damaged = throughJson(snapshot);
		for (const [path, value] of Object.entries(edits)) damageAt(damaged, path, value);
		expect(thrownBy(() => Agent.restore(damaged, options))).toBe(`agentchart: the snapshot's machine.context.run.batch.effectPrefix (${expected}; the chart's own snapshots always agree): it was edited or damaged`);
		expect(runs).toEqual([]);
	});

	it("is refused without the prefix in format version 3; a version 2 snapshot is given its run's", async () => {
		const { snapshot, runs, options } = await journaledRunningTool();
		const damaged = throughJson(snapshot);
		damageAt(damaged, "machine.context.run.batch.effectPrefix", undefined);
		expect(thrownBy(() => Agent.restore(damaged, options))).toBe("agentchart: the snapshot's machine.context.run.batch.effectPrefix must be a string (every batch of a snapshot of format version 3 or later has it), not undefined");
		const older = { ...damaged, version: 2 };
		const agent = Agent.restore(older, options);
		expect(agent.snapshot().machine.context.run?.batch?.effectPrefix).toBe("r1.t1");
		await agent.waitForIdle();
		expect(runs).toEqual([]);
		// An older snapshot's counters set forward cannot be told from its batch: it has no prefix of its own.
	});
});

// Found by the damage property once it nudged numbers in ids: a call's key edited ("l1" to "l0") made the
// restore look its journal up under another id, and the call ran again.
describe("a snapshot whose call is keyed otherwise than by its id", () => {
	it.each([
		["its key edited", "key", "b", '(\"b\") is not made from its tool call\'s id (\"a\"'],
		["its id edited", "toolCall.id", "b", '(\"a\") is not made from its tool call\'s id (\"b\"'],
		["a repeat's number that callKeyFor never gives", "key", "a#0", '(\"a#0\") is not made from its tool call\'s id (\"a\"'],
	])("is refused: %s", async (_what, field, value, expected) => {
		const { snapshot, options } = await waitingWithJournal();
		const damaged = throughJson(snapshot);
		damageAt(damaged, `machine.context.run.batch.calls.0.${field}`, value);
		expect(thrownBy(() => Agent.restore(damaged, options))).toBe(`agentchart: the snapshot's machine.context.run.batch.calls[0].key ${expected}; the chart's own snapshots always make it so): it was edited or damaged`);
	});

	it("restores a repeated id's key (a#2)", async () => {
		const { snapshot, options } = await waitingWithJournal();
		const repeated = throughJson(snapshot);
		damageAt(repeated, "machine.context.run.batch.calls.0.key", "a#2");
		const restored = Agent.restore(repeated, options);
		expect(restored.snapshot().machine.context.run?.batch?.calls.map((call) => call.key)).toEqual(["a#2"]);
		restored.dispose();
		await finishesAfterApproval(repeated, options);
	});
});

// Found by the damage property: a run's snapshot with a later entry of another run (journalSeq 0, an
// entry's run renumbered) restored, and the restored agent's own snapshot, having seen it, was refused.
describe("a run's snapshot whose journal holds later entries of another run", () => {
	it("restores without them, says so, and the restored agent's snapshot restores again", async () => {
		const { snapshot, options } = await waitingWithJournal();
		const later = throughJson(snapshot);
		const last = later.journal.at(-1);
		if (!last) throw new Error("the run's journal is empty");
		later.journal.push({ ...last, seq: later.journalSeq + 1, effect: "r1.m9" }, { ...last, seq: later.journalSeq + 2, effect: "r2.m1" });
		const agent = Agent.restore(later, options);
		expect(agent.storeProblems).toEqual([expect.stringMatching(/^the journal holds 1 entry after the snapshot of runs other than its run in progress \(r2, where the snapshot is in r1\): it was left out/)]);
		const again = throughJson(agent.snapshot());
		expect(again.journal.map((entry) => entry.effect)).not.toContain("r2.m1");
		Agent.restore(again, options).dispose();
		agent.dispose();
	});
});

describe("an idle snapshot whose journal holds a later entry of a run that does not follow it", () => {
	it("restores without it and says so, counting it as one entry", async () => {
		const scripted = createScriptedModel([{ content: "one" }]);
		const store = createMemoryStore();
		const agent = new Agent({ initialState: { model: scripted.model }, streamFn: scripted.streamFn, store, sessionId: "s" });
		await agent.prompt("go");
		const idle = throughJson(agent.snapshot());
		agent.dispose();
		const loaded = await store.load("s");
		const start = loaded?.snapshot?.journal.find((entry) => entry.kind === "run" && entry.phase === "start");
		if (!start) throw new Error("the store holds no start of the run");
		idle.journal.push({ ...start, seq: idle.journalSeq + 1, effect: "r5" });
		const restored = Agent.restore(idle, { streamFn: scripted.streamFn });
		expect(restored.storeProblems).toEqual([expect.stringMatching(/^the journal holds 1 entry of runs that do not follow the snapshot \(r5, where r2 would be next\), .*: it was left out/)]);
		expect(restored.snapshot().journal.map((entry) => entry.effect)).not.toContain("r5");
		restored.dispose();
	});
});
