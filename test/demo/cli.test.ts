import { type ChildProcessWithoutNullStreams, spawn, spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { DemoUsageError, parseDemoArgs } from "../../src/demo/cli-args.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const DEMO = ["--import", "tsx", "src/demo/main.ts"];
const ENV = { ...process.env, ANTHROPIC_API_KEY: "", FORCE_COLOR: "0" };

function runDemo(args: string[]): { status: number | null; stdout: string; stderr: string } {
	const result = spawnSync(process.execPath, [...DEMO, ...args], { cwd: ROOT, encoding: "utf8", env: ENV, timeout: 60_000 });
	return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** Collects a child's output and resolves when it contains `text`. */
function waitForOutput(child: ChildProcessWithoutNullStreams, text: RegExp, timeoutMs = 30_000): Promise<string> {
	return new Promise((resolve, reject) => {
		let output = "";
		const timer = setTimeout(() => reject(new Error(`timed out waiting for ${text}; output so far:\n${output}`)), timeoutMs);
		const onData = (chunk: Buffer) => {
			output += chunk.toString();
			if (text.test(output)) {
				clearTimeout(timer);
				resolve(output);
			}
		};
		child.stdout.on("data", onData);
		child.stderr.on("data", onData);
	});
}

function exitOf(child: ChildProcessWithoutNullStreams, timeoutMs = 15_000): Promise<number | null> {
	return new Promise((resolve, reject) => {
		const timer = setTimeout(() => reject(new Error("the demo did not exit")), timeoutMs);
		child.once("exit", (code) => {
			clearTimeout(timer);
			resolve(code);
		});
	});
}

describe("the demo CLI (npm start)", () => {
	it("runs the scripted agent without a key", () => {
		const result = runDemo([]);
		expect(result.status).toBe(0);
		expect(result.stdout).toContain("model: scripted (no API key needed)");
		expect(result.stdout).toMatch(/── done: \d+ new messages ──/);
	});

	it("prints its usage for --help", () => {
		const result = runDemo(["--help"]);
		expect(result.status).toBe(0);
		expect(result.stdout).toContain("Usage: npm start -- [options]");
		expect(result.stdout).toContain("--provider <name>");
	});

	it("refuses an unknown flag with the usage, and --model without a key", () => {
		const unknown = runDemo(["--verbose"]);
		expect(unknown.status).toBe(2);
		expect(unknown.stderr).toContain("Unknown option: --verbose");
		expect(unknown.stderr).toContain("Usage: npm start -- [options]");
		const noKey = runDemo(["--model", "claude-sonnet-4-6"]);
		expect(noKey.status).toBe(2);
		expect(noKey.stderr).toContain("ANTHROPIC_API_KEY is not set");
		// A base URL that is not one is a bad flag like any other: the usage, status 2.
		const badUrl = runDemo(["--provider", "openai-compatible", "--base-url", "localhost:11434", "--model", "m"]);
		expect(badUrl.status).toBe(2);
		expect(badUrl.stderr).toContain('--base-url must be an http or https URL, got "localhost:11434"');
		expect(badUrl.stderr).toContain("Usage: npm start -- [options]");
	});

	it("refuses a value given to a switch (--inspect=false turned the visualizer on)", () => {
		for (const arg of ["--inspect=false", "--help=no", "--wait-for-page=0"]) expect(() => parseDemoArgs([arg]), arg).toThrow(`takes no value (got ${arg})`);
		expect(parseDemoArgs(["--inspect"]).inspect).toBe(true);
	});

	it("refuses an empty value (an empty --prompt was sent to the model as an empty message)", () => {
		for (const argv of [["--prompt", ""], ["--prompt="], ["--prompt", "  "], ["--model="], ["--base-url", ""]]) expect(() => parseDemoArgs(argv), JSON.stringify(argv)).toThrow(`${argv[0]?.split("=")[0]} needs a value, got an empty one`);
		expect(parseDemoArgs(["--prompt", "hi"]).prompt).toBe("hi");
	});

	it("refuses an argument named as a property every object has (it was taken as a flag with a value)", () => {
		for (const name of ["constructor", "toString", "__proto__"]) {
			expect(() => parseDemoArgs([name, "x"])).toThrow(DemoUsageError);
			expect(() => parseDemoArgs([name, "x"])).toThrow(`Unknown option: ${name}`);
		}
	});

	it("without a terminal, keeps the visualizer open after the run until SIGINT", async () => {
		const child = spawn(process.execPath, [...DEMO, "--inspect"], { cwd: ROOT, env: ENV });
		try {
			const output = await waitForOutput(child, /press Ctrl-C to exit/);
			const url = /visualizer: (http:\/\/127\.0\.0\.1:\d+\/)/.exec(output)?.[1];
			expect(url).toBeDefined();
			await new Promise((resolve) => setTimeout(resolve, 300));
			const page = await fetch(`${url}api/chart`);
			expect(page.status).toBe(200);
			child.kill("SIGINT");
			expect(await exitOf(child)).toBe(0);
		} finally {
			child.kill("SIGKILL");
		}
	});

	it("in a terminal, starts on Enter and exits on Ctrl-C", async () => {
		// util-linux `script` gives the demo a real pseudo-terminal: Enter and Ctrl-C are typed.
		// `exec` replaces script's shell. Otherwise dash (Debian's /bin/sh, which script runs when
		// SHELL is unset, as in CI, and which this test pins) stays in the terminal's foreground
		// process group, dies of the SIGINT meant for the demo and script reports 130.
		const command = `exec ${process.execPath} ${DEMO.join(" ")} --inspect`;
		const child = spawn("script", ["-qfec", command, "/dev/null"], { cwd: ROOT, env: { ...ENV, SHELL: "/bin/sh" } });
		try {
			// The page opens on a run that has not started (it used to open on `ended`).
			expect(await waitForOutput(child, /press Enter to start the run/)).not.toMatch(/── turn ──|── done/);
			child.stdin.write("\r");
			await waitForOutput(child, /press Ctrl-C to exit/);
			child.stdin.write("\x03");
			expect(await exitOf(child)).toBe(0);
		} finally {
			child.kill("SIGKILL");
		}
	});
});
