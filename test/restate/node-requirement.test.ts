/**
 * The Restate SDK's Node requirement: checked by `createAgentSessions`, stated in the docs, still
 * the SDK's real one, and met by the workers the tests, demo and bench start (on this machine's
 * Node when it is 22+, else on the Node 22 binary that test/runtimes installs from npm).
 */
import { execFileSync } from "node:child_process";
import { readFile, readdir } from "node:fs/promises";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { workerNode } from "../../scripts/restate/cluster.js";
import { createAgentSessions } from "../../src/restate/index.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const require = createRequire(import.meta.url);

describe("the Restate SDK's Node requirement", () => {
	it("is checked: createAgentSessions refuses a Node without Promise.withResolvers and names the Node it found", () => {
		const promise = Promise as { withResolvers?: unknown };
		const had = Object.getOwnPropertyDescriptor(Promise, "withResolvers");
		delete promise.withResolvers;
		try {
			expect(() => createAgentSessions({ agent: () => ({}) })).toThrow(`agentchart/restate: the Restate SDK needs Node 22 or newer (this is Node ${process.versions.node})`);
		} finally {
			if (had) Object.defineProperty(Promise, "withResolvers", had);
		}
	});

	it("is the SDK's own: it calls Promise.withResolvers and declares no Node line that 22 misses", async () => {
		const sdk = dirname(require.resolve("@restatedev/restate-sdk/package.json"));
		const manifest = JSON.parse(await readFile(join(sdk, "package.json"), "utf8")) as { engines?: { node?: string } };
		// Should the SDK declare a Node line one day, the check, the docs and the workers' Node follow it.
		expect(manifest.engines?.node ?? "none").toMatch(/^(none|>=\s*(1\d|2[0-2])(\.\d+)*)$/);
		const files = (await readdir(join(sdk, "dist"))).filter((file) => file.endsWith(".js"));
		const sources = await Promise.all(files.map((file) => readFile(join(sdk, "dist", file), "utf8")));
		expect(sources.some((source) => source.includes("Promise.withResolvers"))).toBe(true);
	});

	it("is stated in docs/restate.md and the README", async () => {
		// Compared with its line breaks as spaces: a reflowed paragraph says the same.
		expect((await readFile(join(ROOT, "docs/restate.md"), "utf8")).replace(/\s+/g, " ")).toContain("needs **Node 22 or newer** for the workers");
		expect(await readFile(join(ROOT, "README.md"), "utf8")).toContain("workers on Node 22+");
	});

	it("is met by the Node the workers of the tests, the demo and the bench run on", { timeout: 180_000 }, async () => {
		const node = await workerNode();
		const major = Number(/^v(\d+)\./.exec(execFileSync(node, ["--version"], { encoding: "utf8" }))?.[1]);
		expect(major).toBeGreaterThanOrEqual(22);
		expect(execFileSync(node, ["-p", "typeof Promise.withResolvers"], { encoding: "utf8" }).trim()).toBe("function");
	});
});
