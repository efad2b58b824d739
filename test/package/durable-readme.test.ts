/**
 * The durable examples of the README and docs/durable.md, run as the programs a user copies: each
 * block compiled as it is written, run by plain Node in a project that installed the packed
 * package, one process after the other on one sessions folder. Before, the README's program left
 * a session whose call waited for approval when a process stopped waiting forever: a loaded agent
 * does not ask about such calls again, and the program only answered the questions it was asked.
 */
import { spawnSync } from "node:child_process";
import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import ts from "typescript";
import { beforeAll, describe, expect, it } from "vitest";
import { Agent } from "../../src/agent.js";
import { createFileStore } from "../../src/durable/file-store.js";
import { textOf } from "../agent/helpers.js";
import { makeTool, ok } from "../agent/helpers.js";
import { type ConsumerProject, REPO_ROOT, consumerProject } from "./consumer-project.js";

/** The first ```ts block of `markdown` after the line `after`, or the one holding `holding`. */
function block(markdown: string, find: { after: string } | { holding: string }): string {
	const blocks = markdown.split(/^```ts\s*$/m).slice(1).map((rest) => rest.split(/^```\s*$/m)[0] ?? "");
	if ("holding" in find) {
		const found = blocks.find((code) => code.includes(find.holding));
		if (!found) throw new Error(`no ts block holds ${find.holding}`);
		return found;
	}
	const start = markdown.indexOf(find.after);
	if (start < 0) throw new Error(`no line ${find.after}`);
	const rest = markdown.slice(start).split(/^```ts\s*$/m)[1];
	if (rest === undefined) throw new Error(`no ts block after ${find.after}`);
	return rest.split(/^```\s*$/m)[0] ?? "";
}

/** Writes `code` compiled to an ES module (types dropped, nothing else changed) as `name` in `dir`. */
async function program(dir: string, name: string, code: string): Promise<string> {
	const { outputText } = ts.transpileModule(code, { compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 } });
	const path = join(dir, name);
	await writeFile(path, outputText);
	return path;
}

function run(path: string, cwd: string): { status: number | null; output: string } {
	const result = spawnSync(process.execPath, [path], { cwd, encoding: "utf8", timeout: 60_000 });
	return { status: result.status, output: `${result.stdout}${result.stderr}` };
}

/** Session `sessionId` in `dir`/sessions as a new agent of this process finds it, as "role: text" lines. */
async function transcript(dir: string, sessionId: string, toolName: string): Promise<string[]> {
	const agent = await Agent.load({ store: createFileStore(join(dir, "sessions")), sessionId, initialState: { tools: [makeTool(toolName, async () => ok(""))] } });
	return agent.state.messages.map((message) => `${message.role}: ${textOf(message)}`);
}

describe("the durable examples, run one process after the other", { timeout: 300_000 }, () => {
	let project: ConsumerProject;
	let readme: string;
	let durable: string;

	beforeAll(async () => {
		project = await consumerProject();
		readme = await readFile(join(REPO_ROOT, "README.md"), "utf8");
		durable = await readFile(join(REPO_ROOT, "docs", "durable.md"), "utf8");
	}, 300_000);

	const deployed = ["user: Deploy billing", "assistant: ", "toolResult: billing deployed", "assistant: Deployed."];

	it("the README's program runs a session to its end, and run again, finds it ended and asks nothing more", async () => {
		const dir = await mkdtemp(join(project.dir, "durable-readme-"));
		const main = await program(dir, "main.mjs", block(readme, { after: "## Runs that survive a crash" }));
		for (let time = 0; time < 2; time++) {
			const { status, output } = run(main, dir);
			expect(status, output).toBe(0);
			expect(await transcript(dir, "ops-7", "deploy")).toEqual(deployed);
		}
	});

	it("the README's program, run after durable.md's first process exited while its call waited, answers the call and ends the run", async () => {
		const dir = await mkdtemp(join(project.dir, "durable-readme-"));
		const asks = await program(dir, "asks.mjs", block(durable, { holding: "process.exit(0); // the question is stored already" }));
		const main = await program(dir, "main.mjs", block(readme, { after: "## Runs that survive a crash" }));
		const asked = run(asks, dir);
		expect(asked.status, asked.output).toBe(0);
		expect(asked.output).toMatch(/asked: deploy \{"service":"billing"\} \(call-1\)/);
		const { status, output } = run(main, dir);
		expect(status, output).toBe(0);
		expect(await transcript(dir, "ops-7", "deploy")).toEqual(deployed);
	});

	it("durable.md's first program, run twice, charges once", async () => {
		const dir = await mkdtemp(join(project.dir, "durable-readme-"));
		const main = await program(dir, "main.mjs", block(durable, { holding: 'sessionId: "customer-42"' }));
		for (let time = 0; time < 2; time++) {
			const { status, output } = run(main, dir);
			expect(status, output).toBe(0);
			expect(await transcript(dir, "customer-42", "charge")).toEqual(["user: Charge me 20", "assistant: ", "toolResult: charged 20", "assistant: Charged 20."]);
		}
	});
});
