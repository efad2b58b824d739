/**
 * A long session stays bounded in the page: the log keeps at most its row limit, the
 * conversation its entry limit, the store lets its oldest records go (the seek bar starts
 * later), and times still count from the session's first record.
 */
import { describe, expect, it } from "vitest";
import { createAgentInspector } from "../../src/inspect/inspector.js";
import type { InspectionRecord } from "../../src/inspect/records.js";
import { attachVisualizer, startVisualizerServer } from "../../src/inspect/visualizer-server.js";
import { MAX_ROWS } from "../../visualizer/views/log-view.js";
import { MAX_ENTRIES } from "../../visualizer/model/spans.js";
import { chromiumAvailable, openPage, renderedCursor, useBrowser, withCleanup } from "./browser.js";
import { flushed, weatherAgent } from "./scenarios.js";

/** One recorded run played `times` times over, one after another, as a long session would. */
async function longSession(times: number): Promise<InspectionRecord[]> {
	const agent = weatherAgent({ delayMs: 0 });
	const inspector = createAgentInspector();
	inspector.attach(agent.actor);
	await agent.prompt("Weather?");
	await flushed(inspector);
	agent.dispose();
	const run = inspector.history();
	const first = run[0]?.t ?? 0;
	const length = (run.at(-1)?.t ?? first) - first + 50;
	const records: InspectionRecord[] = [];
	for (let round = 0; round < times; round++) {
		for (const record of run) records.push({ ...record, seq: records.length + 1, t: record.t + round * length });
	}
	return records;
}

describe.skipIf(!chromiumAvailable)("a long session in the visualizer", () => {
	const browser = useBrowser();

	it("keeps the log, the conversation and the records it holds bounded", { timeout: 90_000 }, async () => {
		const records = await longSession(200);
		expect(records.length).toBeGreaterThan(20_000);
		await withCleanup(async (defer) => {
			const server = await startVisualizerServer({ replay: records });
			defer(() => server.close());
			const { page, errors } = await openPage(browser(), server.url);
			defer(() => page.close());
			await page.waitForFunction((end) => window.agentchart.end === end, records.length, { timeout: 60_000 });
			expect(await renderedCursor(page)).toBe(records.length);
			expect(await page.locator("#log .row").count()).toBe(MAX_ROWS);
			expect(await page.locator("#log .earlier").count()).toBe(1);
			expect(await page.locator("#transcript .entry").count()).toBe(MAX_ENTRIES);
			// Times count from the session's first record, also after it was let go.
			const times = await page.locator("#log .row .time").allTextContents();
			const seconds = times.map((time) => Number(time.replace(/^\+|\s*s$/g, "")));
			expect(seconds[0]).toBeGreaterThan(0);
			expect(seconds).toEqual([...seconds].sort((a, b) => a - b));
			// Beyond the store's capacity the oldest records were let go: the seek bar starts later.
			const start = Number(await page.locator("#replay-seek").getAttribute("min"));
			expect(start).toBeGreaterThan(0);
			await page.click("#replay-start");
			expect(await renderedCursor(page)).toBe(start);
			expect(errors).toEqual([]);
		});
	});

	it("shows a page opened after the server's history let the agent's first records go the agent, where it is and what it said last", async () => {
		await withCleanup(async (defer) => {
			const agent = weatherAgent({ delayMs: 0 });
			defer(() => agent.dispose());
			// A history of 60 records: the first run's records, the agent's creation among them, are let go.
			const visualizer = await attachVisualizer(agent.actor, { inspector: createAgentInspector({ historySize: 60 }) });
			defer(() => visualizer.close());
			await agent.prompt("Weather?");
			await agent.prompt("Weather again?");
			const { page, errors } = await openPage(browser(), visualizer.url);
			defer(() => page.close());
			await page.waitForFunction(() => window.agentchart.end > 0);
			await renderedCursor(page);
			expect(await page.locator("#active-state").textContent()).toBe("idle");
			expect(await page.evaluate(() => window.agentchart.activeState)).toBe("agent.idle");
			expect(await page.locator('svg.chart .state.active[data-state-id="agent.idle"]').count()).toBe(1);
			expect((await page.locator("#transcript .entry.assistant > .text").allTextContents()).at(-1)).toBe("Paris is sunny and so is Tokyo.");
			expect(errors).toEqual([]);
		});
	});
});
