/**
 * Replay: the seek bar moves the chart, the conversation, the timeline and the log together;
 * steps go from log row to log row; play pauses on a chosen event type; back at the start the
 * page shows nothing applied, and the log follows the cursor.
 */
import { join } from "node:path";
import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { createAgentInspector } from "../../src/inspect/inspector.js";
import type { InspectionRecord } from "../../src/inspect/records.js";
import { readRecording, recordToNdjson } from "../../src/inspect/sinks.js";
import { toStatechartGraph } from "../../src/inspect/statechart-graph.js";
import { startVisualizerServer } from "../../src/inspect/visualizer-server.js";
import { agentMachine } from "../../src/machines/agent-machine.js";
import { indexChart, leafOf } from "../../visualizer/model/chart-index.js";
import { describeRecord } from "../../visualizer/model/log-lines.js";
import { RecordStore } from "../../visualizer/model/record-store.js";
import { chromiumAvailable, openPage, renderedCursor, useBrowser, withCleanup } from "./browser.js";
import { weatherAgent } from "./scenarios.js";
import { useTempDirs } from "../temp-dirs.js";

const chart = indexChart(toStatechartGraph(agentMachine));
const tempDir = useTempDirs("agentchart-replay-");

/** A recorded run of the weather agent, as a user would make one: NDJSON, read back. */
async function recordedRun(): Promise<InspectionRecord[]> {
	const path = join(await tempDir(), "run.ndjson");
	const agent = weatherAgent({ delayMs: 2 });
	const inspector = createAgentInspector();
	inspector.attach(agent.actor);
	const recording = recordToNdjson(inspector, path);
	await agent.prompt("Weather in Paris and Tokyo?");
	await recording.close();
	agent.dispose();
	return readRecording(path);
}

/** Seq of the last record the log lists (default filters: deltas hidden) before `position`. */
function lastListed(records: readonly InspectionRecord[], position: number): number | undefined {
	for (let index = position - 1; index >= 0; index--) {
		const record = records[index];
		const line = record ? describeRecord(record, { chart, nameOf: (id) => id ?? "" }) : undefined;
		if (record && line && line.category !== "delta") return record.seq;
	}
	return undefined;
}

async function seek(page: Page, position: number): Promise<void> {
	await page.locator("#replay-seek").fill(String(position));
	expect(await renderedCursor(page)).toBe(position);
}

async function lastRow(page: Page): Promise<{ seq: number; type: string; inView: boolean }> {
	return page.evaluate(() => {
		const rows = document.querySelectorAll<HTMLElement>("#log .row");
		const row = rows[rows.length - 1];
		const log = document.getElementById("log")?.getBoundingClientRect();
		const box = row?.getBoundingClientRect();
		return { seq: Number(row?.dataset["seq"]), type: row?.dataset["type"] ?? "", inView: !!(box && log && box.bottom <= log.bottom + 1 && box.top >= log.top - 1) };
	});
}

describe.skipIf(!chromiumAvailable)("replaying a recording", { timeout: 60_000 }, () => {
	const browser = useBrowser();

	it("moves every view together with the seek bar, steps by event, pauses on a chosen event type, and shows nothing at the start", async () => {
		const records = await recordedRun();
		const store = new RecordStore(chart);
		store.push(records);
		await withCleanup(async (defer) => {
			const server = await startVisualizerServer({ replay: records });
			defer(() => server.close());
			const { page, errors } = await openPage(browser(), server.url);
			defer(() => page.close());
			await page.waitForFunction((end) => window.agentchart.end === end, records.length);
			expect(await renderedCursor(page)).toBe(records.length);

			// To the moment both tool calls had started: every view shows that moment.
			const started = records.findIndex((record, index) => record.type === "@agentchart.emitted" && record.event.type === "tool_execution_start" && records.slice(0, index).some((earlier) => earlier.type === "@agentchart.emitted" && earlier.event.type === "tool_execution_start"));
			const middle = started + 1;
			await seek(page, middle);
			const model = store.modelAt(middle);
			expect(await page.evaluate(() => window.agentchart.activeState)).toBe(leafOf(chart, model.activeIds));
			expect(await page.locator("#active-state").textContent()).toBe("running.tool-dispatching");
			expect(await page.locator("#transcript .entry").count()).toBe(model.transcript.length);
			expect(await page.locator('#transcript .entry[data-kind="tool"] .badge').allTextContents()).toEqual(["running", "running"]);
			expect(await page.locator("#timeline .bar-tool").count()).toBe(2);
			expect(await page.locator("#timeline .bar-turn").count()).toBe(1);
			const row = await lastRow(page);
			expect(row.seq).toBe(lastListed(records, middle));
			expect(row.type).toBe("tool_execution_start");
			expect(row.inView).toBe(true);

			// A step goes to the next listed record; the log follows.
			await page.click("#replay-forward");
			const stepped = await renderedCursor(page);
			expect(stepped).toBeGreaterThan(middle);
			expect((await lastRow(page)).seq).toBe(lastListed(records, stepped));
			expect((await lastRow(page)).seq).toBe(records[stepped - 1]?.seq);
			await page.click("#replay-back");
			expect(await renderedCursor(page)).toBe(middle);
			expect((await lastRow(page)).seq).toBe(lastListed(records, middle));

			// Back to the start: nothing applied, nothing shown.
			await page.click("#replay-start");
			expect(await renderedCursor(page)).toBe(0);
			expect(await page.locator("#active-state").textContent()).toBe("no records yet");
			expect(await page.locator("#log .row").count()).toBe(0);
			expect(await page.locator("#transcript .entry").count()).toBe(0);
			expect(await page.locator("svg.chart .state.active").count()).toBe(0);
			// The timeline's cursor at the recording's first moment, not at its end.
			expect(await page.locator(".timeline-cursor").evaluate((cursor) => (cursor as HTMLElement).style.left)).toBe("0%");
			for (let step = 1; step <= 3; step++) {
				await page.click("#replay-forward");
				await renderedCursor(page);
				expect(await page.locator("#log .row").count()).toBe(step);
				const last = await lastRow(page);
				expect(last.inView).toBe(true);
			}
			expect(await page.locator("#active-state").textContent()).toBe("idle");

			// Play, pausing on the first tool_execution_end.
			await page.selectOption("#replay-pause-on", "tool_execution_end");
			await page.selectOption("#replay-speed", "20");
			await page.click("#replay-play");
			await page.waitForFunction(() => document.body.dataset["playing"] === "false");
			const paused = await renderedCursor(page);
			expect(records[paused - 1]).toMatchObject({ type: "@agentchart.emitted", event: { type: "tool_execution_end" } });
			expect((await lastRow(page)).type).toBe("tool_execution_end");
			expect(await page.locator('#transcript .entry[data-kind="tool"] .badge').allTextContents()).toEqual(["done", "running"]);

			await page.click("#replay-end");
			expect(await renderedCursor(page)).toBe(records.length);
			expect(await page.locator("#active-state").textContent()).toBe("idle");

			// A click on the timeline's track moves the cursor to that time.
			const track = await page.locator("#timeline .axis-row .track").boundingBox();
			if (!track) throw new Error("no timeline axis");
			const extent = () => page.evaluate(() => [Number(document.getElementById("timeline")?.dataset["from"]), Number(document.getElementById("timeline")?.dataset["to"])]);
			const [from, to] = await extent();
			await page.mouse.click(track.x + track.width * 0.25, track.y + track.height / 2);
			await page.waitForFunction((end) => window.agentchart.cursor < end, records.length);
			const clicked = await renderedCursor(page);
			// The timeline shows the same stretch of time wherever the cursor is in the run.
			expect(await extent()).toEqual([from, to]);
			const target = (from ?? 0) + ((to ?? 0) - (from ?? 0)) * 0.25;
			expect(records[clicked - 1]?.t).toBeGreaterThanOrEqual(target - 1);
			expect(records[clicked - 2]?.t).toBeLessThan(target + 1);
			expect(errors).toEqual([]);
		});
	});
});
