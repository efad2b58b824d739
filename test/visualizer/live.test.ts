/**
 * A live run watched in the page: the conversation, the timeline and the log follow it, the
 * views are linked both ways, and the screenshots in docs/images/ are taken from it.
 */
import { mkdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { attachVisualizer } from "../../src/inspect/visualizer-server.js";
import { chromiumAvailable, openPage, texts, useBrowser, withCleanup } from "./browser.js";
import { createGate, weatherAgent } from "./scenarios.js";

// The README's screenshots are retaken with UPDATE_SCREENSHOTS=1; otherwise a run leaves the
// tracked images alone and writes its own to test-output/ (gitignored).
const IMAGES = fileURLToPath(new URL(process.env["UPDATE_SCREENSHOTS"] === "1" ? "../../docs/images/" : "../../test-output/", import.meta.url));

const atBottom = (page: Page) => page.evaluate(() => {
	const log = document.getElementById("log");
	return log ? log.scrollTop + log.clientHeight >= log.scrollHeight - 2 : false;
});

describe.skipIf(!chromiumAvailable)("a live run in the visualizer", { timeout: 60_000 }, () => {
	const browser = useBrowser();

	it("shows the conversation, the timeline and the log as the run goes, linked both ways", async () => {
		await withCleanup(async (defer) => {
			const gate = createGate();
			// Streaming tool execution: each call starts as soon as it has streamed, while the reply goes on.
			const agent = weatherAgent({ gate, delayMs: 30, streamingTools: true });
			defer(() => agent.dispose());
			const visualizer = await attachVisualizer(agent.actor);
			defer(() => visualizer.close());
			const { page, errors, requests } = await openPage(browser(), visualizer.url);
			defer(() => page.close());
			await page.waitForFunction(() => window.agentchart.activeState === "agent.idle");

			const run = agent.prompt("What's the weather in Paris and Tokyo?");
			defer(() => run);
			// Cleanup runs in reverse: a test failing while the tools are held lets them go first.
			defer(() => gate.open());
			// The tools are held open: both calls show running, with their arguments.
			await page.waitForFunction(() => document.querySelectorAll('#transcript .entry[data-kind="tool"][data-status="open"]').length === 2);
			await page.waitForSelector('#transcript .entry.assistant:not([data-status="open"])');
			expect(await texts(page, "#transcript .entry.user .text")).toEqual(["What's the weather in Paris and Tokyo?"]);
			expect(await texts(page, "#transcript .entry.assistant .thinking .text")).toEqual(["Two independent lookups: run them in parallel."]);
			expect(await texts(page, "#transcript .entry.assistant > .text")).toEqual(["Let me check both cities."]);
			expect(await texts(page, '#transcript .entry[data-kind="tool"] .span-input')).toEqual(['arguments{"city":"Paris"}', 'arguments{"city":"Tokyo"}']);
			expect(await texts(page, '#transcript .entry[data-kind="tool"] .badge')).toEqual(["running", "running"]);

			// The timeline: the run, turn 1, the model call, two running tool calls that started
			// before the reply finished streaming.
			await page.waitForFunction(() => document.querySelectorAll('#timeline .bar-tool[data-status="open"]').length === 2);
			expect(await page.locator("#timeline .bar-run").count()).toBe(1);
			expect(await page.locator("#timeline .bar-turn").count()).toBe(1);
			// Read together: the timeline is drawn again as records come and the clock runs.
			const overlap = await page.evaluate(() => {
				const model = document.querySelector("#timeline .bar-model")?.getBoundingClientRect();
				const tool = document.querySelector("#timeline .bar-tool")?.getBoundingClientRect();
				return model && tool ? { toolStarts: tool.left, modelEnds: model.right } : undefined;
			});
			expect(overlap?.toolStarts).toBeLessThan(overlap?.modelEnds ?? 0);
			// Every bar's label can be read on every colour it is drawn over (the model call's wait
			// for its first token included): at least 3:1 against the label's colour.
			const contrasts = await page.evaluate(() => {
				const luminance = (color: string) => {
					const [r = 0, g = 0, b = 0] = (color.match(/[\d.]+/g) ?? []).map(Number).map((value) => {
						const c = value / 255;
						return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
					});
					return 0.2126 * r + 0.7152 * g + 0.0722 * b;
				};
				const ratio = (a: string, b: string) => {
					const [light, dark] = [luminance(a), luminance(b)].sort((x, y) => y - x);
					return ((light ?? 0) + 0.05) / ((dark ?? 0) + 0.05);
				};
				return Array.from(document.querySelectorAll<HTMLElement>("#timeline .bar, #timeline .bar .wait")).map((part) => {
					const label = part.closest(".bar")?.querySelector(".bar-label");
					const text = label ? getComputedStyle(label).color : "rgb(255, 255, 255)";
					return { part: part.className, ratio: ratio(getComputedStyle(part).backgroundColor, text) };
				});
			});
			expect(contrasts.some((contrast) => contrast.part === "wait")).toBe(true);
			for (const contrast of contrasts) expect(contrast.ratio, contrast.part).toBeGreaterThanOrEqual(3);

			// The log follows its end while the reader is there.
			await page.waitForFunction(() => window.agentchart.live && document.body.dataset["rendered"] === document.body.dataset["cursor"]);
			expect(await page.locator('#log .row[data-type="tool_execution_start"]').count()).toBe(2);
			await page.waitForFunction(() => {
				const log = document.getElementById("log");
				return log !== null && log.scrollTop + log.clientHeight >= log.scrollHeight - 2;
			});
			mkdirSync(IMAGES, { recursive: true });
			await page.screenshot({ path: `${IMAGES}visualizer-live.png` });

			// Scrolled up to read, the log stays put while the run goes on.
			await page.evaluate(() => {
				const log = document.getElementById("log");
				if (log) log.scrollTop = 0;
			});
			await page.waitForFunction(() => document.getElementById("log")?.dataset["following"] === "false");
			gate.open();
			await run;
			await page.waitForFunction(() => window.agentchart.activeState === "agent.idle" && window.agentchart.live);
			await page.waitForFunction(() => document.querySelectorAll('#log .row[data-type="agent_end"]').length === 1);
			expect(await page.evaluate(() => document.getElementById("log")?.scrollTop)).toBe(0);
			// Scrolled back down, it follows again.
			await page.evaluate(() => {
				const log = document.getElementById("log");
				if (log) log.scrollTop = log.scrollHeight;
			});
			await page.waitForFunction(() => document.getElementById("log")?.dataset["following"] === "true");
			expect(await atBottom(page)).toBe(true);

			// The finished run: results, the answer, every bar closed.
			expect(await texts(page, '#transcript .entry[data-kind="tool"] .badge')).toEqual(["done", "done"]);
			expect(await texts(page, '#transcript .entry[data-kind="tool"] .result-text')).toEqual(["Paris: sunny, 21 °C", "Tokyo: sunny, 21 °C"]);
			expect((await texts(page, "#transcript .entry.assistant > .text")).at(-1)).toBe("Paris is sunny and so is Tokyo.");
			expect(await page.locator("#timeline .bar-turn").count()).toBe(2);
			expect(await page.locator("#timeline .bar-model").count()).toBe(2);
			expect(await page.locator('#timeline .bar[data-status="open"]').count()).toBe(0);
			expect(await page.locator("#active-state").textContent()).toBe("idle");

			// A message selects its turn: the states it went through, its log rows, its bars.
			await page.click("#transcript .entry.assistant >> nth=0");
			await page.waitForFunction(() => window.agentchart.selection === "turn 1");
			const lit = await page.locator("svg.chart .state.selected").evaluateAll((nodes) => nodes.map((node) => node.getAttribute("data-state-id")));
			expect(lit).toEqual(expect.arrayContaining(["agent.running.streaming", "agent.running.tool-executing"]));
			expect(lit).not.toContain("agent.idle");
			expect(await page.locator('#log .row.selected[data-type="tool_execution_end"]').count()).toBe(2);
			expect(await page.locator('#log .row.selected[data-type="turn_start"]').count()).toBe(1);
			expect(await page.locator('#timeline .bar-turn.selected').count()).toBe(1);
			expect(await page.locator('#timeline .bar-tool.selected').count()).toBe(2);

			// A log row opens to its payload, pretty-printed, and selects its turn's messages.
			await page.click('#log .row[data-type="tool_execution_end"] >> nth=0 >> .row-head');
			const payload = page.locator('#log .row.expanded[data-type="tool_execution_end"] .payload');
			await payload.waitFor();
			expect(await payload.textContent()).toContain("Paris: sunny, 21 °C");
			expect(await payload.locator(".json-key").allTextContents()).toEqual(expect.arrayContaining(["toolCallId: ", "toolName: ", "result: ", "isError: "]));
			expect(await page.locator('#transcript .entry.selected[data-kind="tool"]').count()).toBe(2);
			await page.screenshot({ path: `${IMAGES}visualizer-selection.png` });

			// A state in the chart (the last selection brought it into view) selects the moments the
			// run entered it: their log rows, their turn.
			await page.click('svg.chart .state[data-state-id="agent.running.tool-executing"]');
			await page.waitForFunction(() => window.agentchart.selection === "state running.tool-executing");
			expect(await page.locator('svg.chart .state.selected[data-state-id="agent.running.tool-executing"]').count()).toBe(1);
			const enteredRows = await page.locator("#log .row.selected .row-head").allTextContents();
			expect(enteredRows.length).toBeGreaterThan(0);
			for (const row of enteredRows) expect(row).toContain("→ running.tool-executing");
			expect(await page.locator('#transcript .entry.selected[data-kind="tool"]').count()).toBe(2);
			expect(await page.locator("#timeline .bar-turn.selected").count()).toBe(1);

			expect(errors).toEqual([]);
			// Offline: everything came from the visualizer's own server.
			for (const url of requests) expect(url.startsWith(visualizer.url) || url.startsWith("data:"), url).toBe(true);
		});
	});
});
