import { spawnSync } from "node:child_process";
import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { REPO_ROOT, consumerProject } from "./consumer-project.js";

const TSC = createRequire(import.meta.url).resolve("typescript/bin/tsc");

/** A ```ts block of the README and the line it starts on. */
interface CodeBlock {
	line: number;
	code: string;
}

function typeScriptBlocks(markdown: string): CodeBlock[] {
	const blocks: CodeBlock[] = [];
	const lines = markdown.split("\n");
	for (let index = 0; index < lines.length; index++) {
		if (!/^```(ts|typescript)\s*$/.test(lines[index] ?? "")) continue;
		const start = index + 1;
		let end = start;
		while (end < lines.length && lines[end] !== "```") end++;
		blocks.push({ line: start + 1, code: lines.slice(start, end).join("\n") });
		index = end;
	}
	return blocks;
}

/** XState's own declarations need skipLibCheck under exactOptionalPropertyTypes (see agentchart/machine). */
function needsXStateTypes(block: CodeBlock): boolean {
	return /from "(xstate|agentchart\/machine)"/.test(block.code);
}

function compile(dir: string, files: string[], skipLibCheck: boolean): string {
	const options = ["--noEmit", "--strict", "--exactOptionalPropertyTypes", "--noUncheckedIndexedAccess", "--noPropertyAccessFromIndexSignature"];
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

describe("the README", () => {
	it("links only to headings it has", async () => {
		const readme = await readFile(join(REPO_ROOT, "README.md"), "utf8");
		const anchors = headingAnchors(readme);
		expect(anchors).toContain("differences-from-pi-agent-core-0731");
		expect(anchors).toContain("pis-coding-agent-on-agentchart");
		const links = [...readme.matchAll(/\]\(#([^)\s]+)\)/g)].map((match) => match[1] ?? "");
		expect(links.length).toBeGreaterThan(10);
		expect(links.filter((link) => !anchors.has(link))).toEqual([]);
	});

	it("has TypeScript blocks that type-check against the installed package", async () => {
		const readme = await readFile(join(REPO_ROOT, "README.md"), "utf8");
		const blocks = typeScriptBlocks(readme);
		expect(blocks.length).toBeGreaterThan(5);
		const project = await consumerProject();
		const dir = join(project.dir, "readme");
		await rm(dir, { recursive: true, force: true });
		await mkdir(dir);
		await writeFile(join(dir, "package.json"), '{ "type": "module" }\n');
		const strict: string[] = [];
		const withXState: string[] = [];
		for (const block of blocks) {
			const file = `line-${block.line}.ts`;
			// Each block is its own module: names never leak from one example into the next.
			await writeFile(join(dir, file), `${block.code}\nexport {};\n`);
			(needsXStateTypes(block) ? withXState : strict).push(file);
		}
		const errors = [compile(dir, strict, false), withXState.length > 0 ? compile(dir, withXState, true) : ""].filter(Boolean).join("\n");
		// Errors name the README line the block starts on: line-<n>.ts(row,col).
		expect(errors).toBe("");
	}, 300_000);
});
