// @ts-nocheck
import { existsSync, mkdirSync } from "node:fs";
import { Type } from "typebox";
import { type Browser, chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Agent } from "../../src/agent.js";
import { agentMachine } from "../../src/machines/agent-machine.js";
import { createScriptedModel, text, toolCall } from "../../src/providers/scripted.js";
import type { AgentTool } from "../../src/types/agent.js";
import { toStatechartGraph } from "../../src/inspect/statechart-graph.js";
import { attachVisualizer } from "../../src/inspect/visualizer-server.js";

const CHROMIUM = "/usr/bin/chromium";
const available = existsSync(CHROMIUM);
if (!available && process.env["CI"]) throw new Error(`${CHROMIUM} is missing: CI must install Debian's chromium package (see .ci/run).`);
if (!available) console.warn(`Skipping the visualizer browser test: ${CHROMIUM} is not installed (apt-get install -y chromium).`);

const cityParams = Type.Object({ city: Type.String() });
/** Slow enough that the page sees the tool actors running. */
const weather: AgentTool<typeof cityParams> = {
	name: "get_weather",
	label: "Weather",
	description: "Weather in a city.",
	parameters: cityParams,
	execute: async (_id, { city }) => {
		await new Promise((resolve) => setTimeout(resolve, 600));
		return { content: [{ type: "text", text: `${city}: sunny` }], details: {} };
	},
};

describe.skipIf(!available)("the visualizer in a browser", () => {
	let browser: Browser;
	beforeAll(async () => {
		browser = await chromium.launch({
			executablePath: CHROMIUM,
			args: ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
		});
	});
	afterAll(async () => {
		await browser?.close();
	});

	it("shows the states, follows a scripted run through its tools, and logs the tool events", async () => {
		const scripted = createScriptedModel(
			[
				{ content: [text("Checking."), toolCall("get_weather", { city: "Paris" }, "w1"), toolCall("get_weather", { city: "Tokyo" }, "w2")] },
				{ content: "Paris is sunny and so is Tokyo." },
			],
			{ chunkSize: 4, delayMs: 15 },
		);
		const agent = new Agent({ initialState: { model: scripted.model, tools: [weather] }, streamFn: scripted.streamFn });
		const visualizer = await attachVisualizer(agent.actor);
		const page = await browser.newPage({ viewport: { width: 1600, height: 1000 } });
		const requests: string[] = [];
		page.on("request", (request) => requests.push(request.url()));
		const errors: string[] = [];
		page.on("pageerror", (error) => errors.push(error.message));
		try {
			await page.goto(visualizer.url);
			await page.waitForSelector("svg.chart");

			// Every state of the machine is drawn, and the agent starts idle.
			for (const node of toStatechartGraph(agentMachine).nodes) {
				expect(await page.locator(`[data-state-id="${node.id}"]`).count(), node.id).toBe(1);
			}
			await page.waitForFunction(() => window.agentchart?.activeState === "agent.idle");
			expect(await page.locator('[data-state-id="agent.idle"]').getAttribute("class")).toContain("active");

			const run = agent.prompt("Weather in Paris and Tokyo?");
			await page.waitForFunction(() => window.agentchart.activeState === "agent.running.tool-executing");
			expect(await page.locator('[data-state-id="agent.running.tool-executing"]').getAttribute("class")).toContain("active");
			// Both tool actors appear while they run.
			await page.waitForSelector('#actors [data-actor-id="tool:w1"][data-status="active"]');
			await page.waitForSelector('#actors [data-actor-id="tool:w2"][data-status="active"]');
			await run;

			await page.waitForFunction(() => window.agentchart.activeState === "agent.idle");
			const visited = await page.evaluate(() => window.agentchart.visited);
			const streaming = visited.indexOf("agent.running.streaming");
			const executing = visited.indexOf("agent.running.tool-executing");
			expect(streaming).toBeGreaterThan(0);
			expect(executing).toBeGreaterThan(streaming);
			expect(visited.lastIndexOf("agent.running.streaming")).toBeGreaterThan(executing);
			expect(visited[visited.length - 1]).toBe("agent.idle");

			// Tool actors finished; the log shows the tool events; a transition is marked.
			await page.waitForSelector('#actors [data-actor-id="tool:w1"]:not([data-status="active"])');
			await page.waitForSelector('#actors [data-actor-id="tool:w2"]:not([data-status="active"])');
			expect(await page.locator('#log .row[data-type="tool_execution_start"]').count()).toBe(2);
			expect(await page.locator('#log .row[data-type="tool_execution_end"]').count()).toBe(2);
			expect(await page.locator("svg.chart .last-taken").count()).toBeGreaterThan(0);
			expect(await page.locator('#queues tr[data-key="messages"] td').textContent()).toBe("5");

			// Filters hide categories.
			await page.uncheck('#log-filters input[data-category="emitted"]');
			expect(await page.locator('#log .row[data-type="tool_execution_end"]').first().isHidden()).toBe(true);
			await page.check('#log-filters input[data-category="emitted"]');

			mkdirSync("test-output", { recursive: true });
			await page.screenshot({ path: "test-output/visualizer.png" });
			expect(errors).toEqual([]);
			// Offline: everything came from the visualizer's own server.
			for (const url of requests) expect(url.startsWith(visualizer.url) || url.startsWith("data:"), url).toBe(true);
		} finally {
			await page.close();
			await visualizer.close();
			agent.dispose();
		}
	});
});
