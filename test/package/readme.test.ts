import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, readFile, readdir, rm, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { dirname, join, normalize } from "node:path";
import { describe, expect, it } from "vitest";
import { REPO_ROOT, consumerProject } from "./consumer-project.js";

const TSC = createRequire(import.meta.url).resolve("typescript/bin/tsc");

/** A ```ts block of a document and the line it starts on. */
interface CodeBlock {
	file: string;
	line: number;
	code: string;
}

function typeScriptBlocks(file: string, markdown: string): CodeBlock[] {
	const blocks: CodeBlock[] = [];
	const lines = markdown.split("\n");
	for (let index = 0; index < lines.length; index++) {
		if (!/^```(ts|typescript)\s*$/.test(lines[index] ?? "")) continue;
		const start = index + 1;
		let end = start;
		while (end < lines.length && lines[end] !== "```") end++;
		blocks.push({ file, line: start + 1, code: lines.slice(start, end).join("\n") });
		index = end;
	}
	return blocks;
}

/**
 * XState's own declarations need skipLibCheck under exactOptionalPropertyTypes (see
 * agentchart/machine), and so do the Restate SDK's (`@restatedev/restate-sdk-core`'s `JsonSerde`,
 * which `agentchart/restate` reaches; see docs/restate.md).
 */
function needsXStateTypes(block: CodeBlock): boolean {
	return /from "(xstate|agentchart\/machine|agentchart\/restate|@restatedev\/restate-sdk)"/.test(block.code);
}

/**
 * pi-ai's declarations need `skipLibCheck` (they reach into its SDKs' types), and its option
 * types are written without `| undefined`, so a block that uses pi-ai is compiled the way a pi
 * application is: `strict`, without `exactOptionalPropertyTypes` (see docs/from-pi.md).
 */
function usesPiAi(block: CodeBlock): boolean {
	return /from "@mariozechner\/pi-ai"/.test(block.code);
}

function compile(dir: string, files: string[], skipLibCheck: boolean, piStyle = false): string {
	const options = piStyle ? ["--noEmit", "--strict"] : ["--noEmit", "--strict", "--exactOptionalPropertyTypes", "--noUncheckedIndexedAccess", "--noPropertyAccessFromIndexSignature"];
	const flags = [...options, "--target", "es2022", "--module", "nodenext", "--moduleResolution", "nodenext", "--types", "node", "--skipLibCheck", String(skipLibCheck)];
	const result = spawnSync(process.execPath, [TSC, ...flags, ...files], { cwd: dir, encoding: "utf8", timeout: 180_000 });
	return `${result.stdout}${result.stderr}`.trim();
}

/**
 * GitHub's anchor for a heading: lower case, markup and punctuation dropped (hyphens and
 * underscores kept), each space a hyphen; a repeated heading gets -1, -2, ….
 */
function headingAnchors(markdown: string): Set<string> {
	const anchors = new Set<string>();
	const seen = new Map<string, number>();
	let fenced = false;
	for (const line of markdown.split("\n")) {
		if (line.startsWith("```")) fenced = !fenced;
		const heading = fenced ? null : /^#{1,6}\s+(.*?)\s*$/.exec(line);
		if (!heading) continue;
		const text = (heading[1] ?? "").replace(/\[([^\]]*)\]\([^)]*\)/g, "$1").replace(/[`*]/g, "");
		const slug = text.toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, "").replace(/\s/g, "-");
		const count = seen.get(slug) ?? 0;
		seen.set(slug, count + 1);
		anchors.add(count === 0 ? slug : `${slug}-${count}`);
	}
	return anchors;
}

/** The documents users read: the README, CONTRIBUTING.md and the guides in docs/ (not the generated API reference). */
async function documents(): Promise<Map<string, string>> {
	const files = ["README.md", "CONTRIBUTING.md", ...(await readdir(join(REPO_ROOT, "docs"))).filter((name) => name.endsWith(".md")).map((name) => `docs/${name}`)];
	const texts = await Promise.all(files.map((file) => readFile(join(REPO_ROOT, file), "utf8")));
	return new Map(files.map((file, index) => [file, texts[index] ?? ""]));
}

/**
 * Guides other issues are writing (performance: the runtime's owner; visualizer: the
 * visualizer's). A link to one is accepted while the file does not exist yet, and checked like
 * any other once it does.
 */
const WRITTEN_ELSEWHERE = new Set(["docs/performance.md", "docs/visualizer.md", "docs/restate.md"]);

/** Every link of a document to a heading (`#a`) or a file (`x.md`, `x.md#a`) of the repository. */
function localLinks(markdown: string): string[] {
	const links: string[] = [];
	let fenced = false;
	for (const line of markdown.split("\n")) {
		if (line.startsWith("```")) fenced = !fenced;
		if (fenced) continue;
		for (const match of line.matchAll(/\]\(([^)\s]+)\)/g)) {
			const target = match[1] ?? "";
			if (!/^[a-z]+:/i.test(target)) links.push(target);
		}
	}
	return links;
}

describe("the README and the guides", () => {
	it("keep the two fresh-clone commands on the README's first screen", async () => {
		const firstScreen = (await readFile(join(REPO_ROOT, "README.md"), "utf8")).split("\n").slice(0, 10).join("\n");
		expect(firstScreen).toContain("npm install && npm start");
		expect(firstScreen).toContain("npm install && npm test");
	});

	it("tell a newcomer how to run the quick start in an empty folder, before its code", async () => {
		const readme = await readFile(join(REPO_ROOT, "README.md"), "utf8");
		const quickStart = readme.slice(readme.indexOf("## Quick start"), readme.indexOf("```ts", readme.indexOf("## Quick start")));
		// typebox for the tool's schema, tsx to run TypeScript, an ES module for top-level await.
		for (const step of ["npm pkg set type=module", "npm install agentchart typebox", "npm install -D tsx", "npx tsx agent.ts"]) expect(quickStart).toContain(step);
	});

	it("keep contributor commands in CONTRIBUTING.md, and performance to a line with its link", async () => {
		const [readme, contributing] = await Promise.all([readFile(join(REPO_ROOT, "README.md"), "utf8"), readFile(join(REPO_ROOT, "CONTRIBUTING.md"), "utf8")]);
		for (const command of ["npm run bench", "npm run canary", "npm run mutants", "npm run property", "npm run soak", "npm run crash", "npm run diagram", "npm run typecheck"]) {
			expect(readme).not.toContain(command);
			expect(contributing).toContain(`\`${command}`);
		}
		const performance = readme.slice(readme.indexOf("## Performance\n"), readme.indexOf("\n## ", readme.indexOf("## Performance\n") + 1));
		expect(performance.trim().split("\n").filter(Boolean)).toHaveLength(2);
		expect(performance).toContain("(docs/performance.md)");
	});

	it("show package users the package's replay API, not a command of the repository", async () => {
		const readme = await readFile(join(REPO_ROOT, "README.md"), "utf8");
		expect(readme).toContain("startVisualizerServer({ replay: await readRecording(");
		expect(readme).not.toMatch(/npm run visualize -- --replay/);
	});

	it("link only to files and headings that exist", async () => {
		const docs = await documents();
		const broken: string[] = [];
		let count = 0;
		for (const [file, text] of docs) {
			for (const link of localLinks(text)) {
				count++;
				const [path = "", anchor] = link.split("#");
				const target = path === "" ? file : normalize(join(dirname(file), path));
				if (WRITTEN_ELSEWHERE.has(target) && !existsSync(join(REPO_ROOT, target))) continue;
				if (!existsSync(join(REPO_ROOT, target))) {
					broken.push(`${file}: ${link} (no file ${target})`);
					continue;
				}
				if (anchor === undefined || !target.endsWith(".md")) continue;
				const headings = headingAnchors(docs.get(target) ?? (await readFile(join(REPO_ROOT, target), "utf8")));
				if (!headings.has(anchor)) broken.push(`${file}: ${link} (no heading #${anchor} in ${target})`);
			}
		}
		expect(count).toBeGreaterThan(40);
		expect(broken).toEqual([]);
	});

	it("list every flag of the demo's --help in CONTRIBUTING.md's row for it", async () => {
		const { DEMO_USAGE } = await import("../../src/demo/cli-args.js");
		const contributing = await readFile(join(REPO_ROOT, "CONTRIBUTING.md"), "utf8");
		const row = contributing.split("\n").find((line) => line.startsWith("| `npm start -- --help`")) ?? "";
		const flags = [...new Set(DEMO_USAGE.match(/^\s+--[a-z-]+/gm)?.map((flag) => flag.trim()) ?? [])].filter((flag) => flag !== "--help");
		expect(flags.length).toBeGreaterThan(5);
		expect(flags.filter((flag) => !row.includes(`\`${flag}`))).toEqual([]);
	});

	it("name every entry point of package.json exports in the getting-started guide's import table", async () => {
		const manifest = JSON.parse(await readFile(join(REPO_ROOT, "package.json"), "utf8")) as { exports: Record<string, unknown> };
		const entries = Object.keys(manifest.exports).filter((subpath) => subpath !== "./package.json").map((subpath) => subpath.replace(/^\./, "agentchart"));
		const guide = await readFile(join(REPO_ROOT, "docs/getting-started.md"), "utf8");
		const rows = new Set(guide.split("\n").flatMap((line) => /^\| `(agentchart[^`]*)` \|/.exec(line)?.[1] ?? []));
		expect(entries.length).toBeGreaterThan(5);
		expect(entries.filter((entry) => !rows.has(entry))).toEqual([]);
	});

	it("list every guide in docs/ in the guides' index (docs/README.md)", async () => {
		const docs = await documents();
		const linked = new Set(localLinks(docs.get("docs/README.md") ?? "").map((link) => normalize(join("docs", link.split("#")[0] ?? ""))));
		const guides = [...docs.keys()].filter((file) => file.startsWith("docs/") && file !== "docs/README.md");
		expect(guides.length).toBeGreaterThan(15);
		expect(guides.filter((file) => !linked.has(file))).toEqual([]);
	});

	it("have TypeScript blocks that type-check against the installed package", async () => {
		const docs = await documents();
		const blocks = [...docs].flatMap(([file, text]) => typeScriptBlocks(file, text));
		expect(blocks.length).toBeGreaterThan(30);
		const project = await consumerProject();
		const dir = join(project.dir, "docs-blocks");
		await rm(dir, { recursive: true, force: true });
		await mkdir(dir);
		await writeFile(join(dir, "package.json"), '{ "type": "module" }\n');
		const strict: string[] = [];
		const withXState: string[] = [];
		const augmenting: string[] = [];
		const piStyle: string[] = [];
		for (const block of blocks) {
			const name = `${block.file.replace(/[^A-Za-z0-9]+/g, "-")}-line-${block.line}.ts`;
			// Each block is its own module: names never leak from one example into the next.
			await writeFile(join(dir, name), `${block.code}\nexport {};\n`);
			// A block that augments a module changes the types every other block sees: alone.
			if (/^declare module /m.test(block.code)) augmenting.push(name);
			else if (usesPiAi(block)) piStyle.push(name);
			else (needsXStateTypes(block) ? withXState : strict).push(name);
		}
		const runs = [
			compile(dir, strict, false),
			withXState.length > 0 ? compile(dir, withXState, true) : "",
			piStyle.length > 0 ? compile(dir, piStyle, true, true) : "",
			...augmenting.map((name) => compile(dir, [name], false)),
		];
		// Errors name the document and the line the block starts on: <file>-line-<n>.ts(row,col).
		expect(runs.filter(Boolean).join("\n")).toBe("");
	}, 600_000);
});
