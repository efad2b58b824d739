/**
 * The process of many-sessions.test.ts: `sessions` agents on one file store, each prompting at
 * once with a tool call; then each session loaded by a store of its own and prompted again, all at
 * once. It prints one JSON line: the runs that failed, the store problems, the sessions that did
 * not come back whole, and the most files the process held open beyond those it started with
 * (counted in `/proc/self/fd` at every tool call, while the other sessions' writes are on their way).
 *
 * Bundled with its sources (esbuild) and run on plain Node, under the open file limit the parent
 * gives it.
 */
import { readdirSync } from "node:fs";
import { Agent } from "../../src/agent.js";
import { createFileStore } from "../../src/durable/file-store.js";
import { createScriptedModel, toolCall } from "../../src/providers/scripted.js";
import type { AgentTool } from "../../src/types/agent.js";

const [root = "", count = "0"] = process.argv.slice(2);
const sessions = Number(count);

/** The files the process holds open; undefined when even that cannot be read (the limit is reached). */
function openFiles(): number | undefined {
	try {
		return readdirSync("/proc/self/fd").length;
	} catch {
		return undefined;
	}
}

const atStart = openFiles() ?? 0;
let mostOpen = 0;
let limitReached = 0;
const lookup: AgentTool<object, unknown> = {
	name: "lookup",
	label: "Lookup",
	description: "Looks something up",
	parameters: { type: "object", properties: {} } as AgentTool<object, unknown>["parameters"],
	async execute() {
		const open = openFiles();
		if (open === undefined) limitReached++;
		else mostOpen = Math.max(mostOpen, open - atStart);
		return { content: [{ type: "text", text: "found" }], details: {} };
	},
};

function agentOptions(store: ReturnType<typeof createFileStore>, index: number, reply: string) {
	const scripted = createScriptedModel([{ content: [toolCall("lookup", {})] }, { content: reply }]);
	return { store, sessionId: `user-${index}`, initialState: { model: scripted.model, tools: [lookup] }, streamFn: scripted.streamFn };
}

const failed: string[] = [];
const problems: string[] = [];
const store = createFileStore(root, { fsync: "never" });
const first = Array.from({ length: sessions }, (_, index) => new Agent(agentOptions(store, index, "first")));
await Promise.all(
	first.map(async (agent) => {
		await agent.prompt("hello");
		await agent.saved().catch(() => {});
		if (agent.state.errorMessage !== undefined) failed.push(agent.state.errorMessage);
		problems.push(...agent.storeProblems);
	}),
);
let notWhole = 0;
await Promise.all(
	Array.from({ length: sessions }, async (_, index) => {
		try {
			const agent = await Agent.load(agentOptions(createFileStore(root, { fsync: "never" }), index, "second"));
			await agent.waitForIdle();
			if (agent.state.messages.length !== 4) notWhole++;
			await agent.prompt("again");
			await agent.saved().catch(() => {});
			if (agent.state.errorMessage !== undefined) failed.push(agent.state.errorMessage);
			problems.push(...agent.storeProblems);
		} catch (error) {
			failed.push((error as Error).message);
		}
	}),
);
process.stdout.write(`${JSON.stringify({ failed: failed.length, firstFailure: failed[0], problems: problems.length, firstProblem: problems[0], notWhole, mostOpen, limitReached })}\n`);
