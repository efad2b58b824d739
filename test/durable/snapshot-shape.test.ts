/**
 * The snapshot's shape check knows every field of the chart's context: each field of the
 * context, the run, the tool batch and a call is checked, or listed here with why it needs no
 * check. A field added to the chart without either fails here, instead of a damaged snapshot
 * reaching the chart with a value no check looked at.
 */
import { readFile } from "node:fs/promises";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { Agent } from "../../src/agent.js";
import { JOURNAL_ENTRY_CHECKED_FIELDS, SNAPSHOT_CHECKED_FIELDS } from "../../src/durable/snapshot-shape.js";
import type { AgentSnapshot } from "../../src/durable/snapshot.js";
import { createScriptedModel, toolCall } from "../../src/providers/scripted.js";
import { deferred, makeTool, ok, thrownBy } from "../agent/helpers.js";

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
