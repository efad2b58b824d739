/**
 * Stale states, for every way of running: an agent machine embedded in a parent machine
 * (`createActor(parent, { inspect })`), live and replayed, and pi's loop API. Each ends with
 * every tool call done and a header that does not call a stopped agent `idle`.
 */
import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { createAgentInspector } from "../../src/inspect/inspector.js";
import { startVisualizerServer } from "../../src/inspect/visualizer-server.js";
import { chromiumAvailable, openPage, useBrowser, withCleanup } from "./browser.js";
import { createGate, embeddedTicket, flushed, loopRun } from "./scenarios.js";

/** The page's verdict on the tool calls and the agent once it stopped. */
async function expectFinishedAndStopped(page: Page): Promise<void> {
	await page.waitForSelector('#active-state[data-status="stopped"]', { state: "attached" });
	const header = await page.locator("#active-state").textContent();
	expect(header).toBe("stopped (last in idle)");
	expect(await page.locator('#transcript .entry[data-kind="tool"] .badge').allTextContents()).toEqual(["done", "done"]);
	expect(await page.locator('#timeline .bar[data-status="open"]').count()).toBe(0);
	expect(await page.locator('#timeline .bar-tool[data-status="done"]').count()).toBe(2);
	// The actors panel: both calls done, no child of the agent still active.
	expect(await page.locator('#actors [data-actor-id="call:get_weather"]').evaluateAll((rows) => rows.map((row) => row.getAttribute("data-status")))).toEqual(["done", "done"]);
	const active = await page.locator("#actors .actor[data-status=active]").evaluateAll((rows) => rows.map((row) => row.getAttribute("data-actor-id")));
	expect(active.filter((id) => id !== "supportTicket")).toEqual([]);
	// Nothing is drawn active in the chart of a stopped agent.
	expect(await page.locator("svg.chart .state.active").count()).toBe(0);
}

describe.skipIf(!chromiumAvailable)("the visualizer on an embedded agent machine and on the loop API", { timeout: 60_000 }, () => {
	const browser = useBrowser();

	it("an agent machine invoked by a parent: tool calls run then end done, live and in replay; stopped by its parent, the agent says stopped", async () => {
		await withCleanup(async (defer) => {
			const inspector = createAgentInspector();
			const server = await startVisualizerServer({ inspector });
			defer(() => server.close());
			const { page, errors } = await openPage(browser(), server.url);
			defer(() => page.close());
			await server.waitForPage();

			const gate = createGate();
			const ticket = embeddedTicket(inspector, gate);
			defer(() => gate.open());
			// The agent machine is invoked when the ticket opens.
			ticket.open();
			await page.waitForFunction(() => document.querySelectorAll('#transcript .entry[data-kind="tool"][data-status="open"]').length === 2);
			expect(await page.locator('#actors [data-actor-id="call:get_weather"]').evaluateAll((rows) => rows.map((row) => row.getAttribute("data-status")))).toEqual(["running", "running"]);
			expect(await page.locator("#active-state").textContent()).toBe("running.tool-executing");

			gate.open();
			await ticket.resolved;
			await expectFinishedAndStopped(page);
			expect(errors).toEqual([]);

			// The same records replayed end the same way, and the cursor moves back and forth.
			await flushed(inspector);
			const replay = await startVisualizerServer({ replay: inspector.history() });
			defer(() => replay.close());
			const replayed = await openPage(browser(), replay.url);
			defer(() => replayed.page.close());
			await replayed.page.waitForFunction((end) => window.agentchart.end === end && window.agentchart.cursor === end, inspector.history().length);
			await expectFinishedAndStopped(replayed.page);
			await replayed.page.click("#replay-start");
			await replayed.page.waitForFunction(() => window.agentchart.cursor === 0);
			expect(await replayed.page.locator("#active-state").textContent()).toBe("no records yet");
			await replayed.page.click("#replay-end");
			await expectFinishedAndStopped(replayed.page);
			expect(replayed.errors).toEqual([]);
		});
	});

	it("pi's loop API: the run's machine, stopped when the run ends, says stopped, with its tool calls done", async () => {
		await withCleanup(async (defer) => {
			const inspector = createAgentInspector();
			const server = await startVisualizerServer({ inspector });
			defer(() => server.close());
			const { page, errors } = await openPage(browser(), server.url);
			defer(() => page.close());
			await server.waitForPage();
			await loopRun(inspector);
			await page.waitForSelector('#active-state[data-status="stopped"]', { state: "attached" });
			expect(await page.locator("#active-state").textContent()).toBe("stopped (last in idle)");
			expect(await page.locator('#transcript .entry[data-kind="tool"] .badge').allTextContents()).toEqual(["done", "done"]);
			expect(await page.locator('#timeline .bar[data-status="open"]').count()).toBe(0);
			expect((await page.locator("#transcript .entry.assistant > .text").allTextContents()).at(-1)).toBe("Paris is sunny and so is Tokyo.");
			expect(errors).toEqual([]);
		});
	});
});
