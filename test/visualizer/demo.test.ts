/**
 * `npm start -- --inspect`: the demo can wait for the page before it runs, and it keeps
 * serving the finished run, replayable, to a page opened after the run, until Ctrl-C.
 */
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { chromiumAvailable, openPage, renderedCursor, useBrowser, withCleanup } from "./browser.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

/**
 * Everything a child prints, and a wait for a pattern in it (in what came before the wait as
 * well: the demo may print a line while the test is busy with the page).
 */
function printed(child: ChildProcessWithoutNullStreams): (text: RegExp) => Promise<string> {
	let seen = "";
	const waiting = new Set<{ text: RegExp; resolve(seen: string): void }>();
	child.stdout.on("data", (chunk: Buffer) => {
		seen += chunk.toString();
		for (const wait of waiting) {
			if (!wait.text.test(seen)) continue;
			waiting.delete(wait);
			wait.resolve(seen);
		}
	});
	return (text) =>
		new Promise((resolve, reject) => {
			if (text.test(seen)) return resolve(seen);
			waiting.add({ text, resolve });
			child.once("exit", (code) => reject(new Error(`the demo exited (${code}) before printing ${text}:\n${seen}`)));
		});
}

describe.skipIf(!chromiumAvailable)("the demo with --inspect", () => {
	const browser = useBrowser();

	// A child process started through tsx: slower to start than the other tests' servers.
	it("waits for the page with --wait-for-page, then keeps the finished run for a page opened later", { timeout: 90_000 }, async () => {
		await withCleanup(async (defer) => {
			const child = spawn(process.execPath, ["--import", "tsx", "src/demo/main.ts", "--wait-for-page"], { cwd: ROOT, env: { ...process.env, ANTHROPIC_API_KEY: "", FORCE_COLOR: "0" } });
			defer(() => child.kill("SIGKILL"));
			const output = printed(child);
			const started = await output(/waiting for the page to connect/);
			const url = /visualizer: (http:\/\/127\.0\.0\.1:\d+\/)/.exec(started)?.[1];
			if (!url) throw new Error(`no URL in:\n${started}`);
			// Nothing runs before the page is there: a second after the line, still nothing of a run
			// (a demo that did not wait has finished by then; the history alone would not tell it).
			await new Promise((resolve) => setTimeout(resolve, 1_000));
			const meanwhile = await output(/waiting for the page to connect/);
			expect(meanwhile).not.toContain("── turn ──");
			expect(meanwhile).not.toContain("press Ctrl-C to exit");

			const first = await openPage(browser(), url);
			defer(() => first.page.close());
			await output(/press Ctrl-C to exit/);
			// The page saw the run from its first event.
			// The demo disposes its agent after the run: the machine is in its final state.
			await first.page.waitForFunction(() => window.agentchart.statusText === "ended (final state)");
			expect(await first.page.evaluate(() => window.agentchart.visited)).toEqual(expect.arrayContaining(["agent.idle", "agent.running.streaming", "agent.running.tool-executing"]));
			expect(await first.page.locator("#transcript .entry.user .text").allTextContents()).toEqual(["What's the weather in Paris right now, and what time is it there?"]);

			// A page opened after the run gets the whole run, and can replay it.
			const late = await openPage(browser(), url);
			defer(() => late.page.close());
			await late.page.waitForFunction(() => window.agentchart.end > 20 && window.agentchart.statusText !== "no records yet");
			const end = await renderedCursor(late.page);
			expect(await late.page.locator('#transcript .entry[data-kind="tool"] .badge').allTextContents()).toEqual(["done", "done"]);
			expect((await late.page.locator("#transcript .entry.assistant > .text").allTextContents()).at(-1)).toContain("Here is what I found");
			await late.page.click("#replay-start");
			expect(await renderedCursor(late.page)).toBe(0);
			await late.page.click("#replay-end");
			expect(await renderedCursor(late.page)).toBe(end);
			expect([...first.errors, ...late.errors]).toEqual([]);

			const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
			child.kill("SIGINT");
			expect(await exited).toBe(0);
		});
	});
});
