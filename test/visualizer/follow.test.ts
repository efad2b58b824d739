/**
 * The conversation follows its end by itself, and the chart keeps the active state in view, as a
 * page open beside a run must (a probe of the page: entries drawn again moved the scroll position,
 * which counted as the reader scrolling away, so the rest of the run stayed out of view; a pane
 * made narrower left the active state half hidden).
 */
import { Type } from "typebox";
import { describe, expect, it } from "vitest";
import { Agent } from "../../src/agent.js";
import { attachVisualizer } from "../../src/inspect/visualizer-server.js";
import { createScriptedModel, text, toolCall } from "../../src/providers/scripted.js";
import type { AgentTool } from "../../src/types/agent.js";
import { chromiumAvailable, openPage, useBrowser, withCleanup } from "./browser.js";
import { createGate } from "./scenarios.js";

const serviceParams = Type.Object({ service: Type.String() });

describe.skipIf(!chromiumAvailable)("a page open beside a run", { timeout: 60_000 }, () => {
	const browser = useBrowser();

	it("keeps the conversation at its end through calls that wait, run and end, and a reply after them", async () => {
		await withCleanup(async (defer) => {
			const gate = createGate();
			const work = (name: string, needsApproval: boolean): AgentTool<typeof serviceParams> => ({
				name,
				label: name,
				description: name,
				parameters: serviceParams,
				needsApproval,
				execute: async (_id, { service }) => (await gate.opened, { content: [{ type: "text" as const, text: `${service} ${name} done` }], details: {} }),
			});
			const scripted = createScriptedModel(
				[
					{ content: [text("Deploying two, checking one."), toolCall("deploy", { service: "billing" }, "d1"), toolCall("deploy", { service: "search" }, "d2"), toolCall("status", { service: "auth" }, "s1")] },
					{ content: "All handled." },
				],
				{ chunkSize: 6, delayMs: 4 },
			);
			const agent = new Agent({ initialState: { model: scripted.model, tools: [work("deploy", true), work("status", false)] }, streamFn: scripted.streamFn });
			defer(() => agent.dispose());
			const visualizer = await attachVisualizer(agent.actor);
			defer(() => visualizer.close());
			const { page, errors } = await openPage(browser(), visualizer.url);
			defer(() => page.close());
			await page.waitForFunction(() => window.agentchart.activeState === "agent.idle");
			const run = agent.prompt("Deploy billing and search, check auth");
			defer(() => run);
			defer(() => gate.open());
			// Each step drawn before the next, as a person watching sees them: the calls waiting, then
			// decided and running, then ending (entries above the end change height as they close).
			const drawn = async () => {
				await page.waitForFunction(() => document.body.dataset["rendered"] === document.body.dataset["cursor"]);
				await new Promise((resolve) => setTimeout(resolve, 300));
			};
			while (agent.pendingApprovals.length < 2) await new Promise((resolve) => setTimeout(resolve, 10));
			await drawn();
			await agent.approve("d1");
			await agent.reject("d2", "change freeze");
			await new Promise((resolve) => setTimeout(resolve, 100));
			await drawn();
			gate.open();
			await run;
			await page.waitForFunction(() => window.agentchart.activeState === "agent.idle" && document.body.dataset["rendered"] === document.body.dataset["cursor"]);
			await page.waitForFunction(() => {
				const list = document.getElementById("transcript");
				return list !== null && list.scrollHeight > list.clientHeight && list.scrollTop + list.clientHeight >= list.scrollHeight - 2;
			});
			expect(await page.evaluate(() => document.getElementById("transcript")?.dataset["following"])).toBe("true");
			expect(errors).toEqual([]);
		});
	});

	it("keeps the active state in view when the chart's pane is made narrower", async () => {
		await withCleanup(async (defer) => {
			const scripted = createScriptedModel([{ content: "hello" }]);
			const agent = new Agent({ initialState: { model: scripted.model }, streamFn: scripted.streamFn });
			defer(() => agent.dispose());
			const visualizer = await attachVisualizer(agent.actor);
			defer(() => visualizer.close());
			const { page, errors } = await openPage(browser(), visualizer.url);
			defer(() => page.close());
			await page.waitForFunction(() => window.agentchart.activeState === "agent.idle");
			await agent.prompt("hi");
			await page.waitForFunction(() => window.agentchart.activeState === "agent.idle" && document.body.dataset["rendered"] === document.body.dataset["cursor"]);
			await page.setViewportSize({ width: 800, height: 800 });
			// The active state is the smallest active box (its parents are active too).
			await page.waitForFunction(
				() => {
					const pane = document.querySelector(".chart-pane")?.getBoundingClientRect();
					const boxes = Array.from(document.querySelectorAll(".chart-pane g.active"), (group) => group.getBoundingClientRect()).filter((box) => box.width > 0);
					const active = boxes.sort((a, b) => a.width * a.height - b.width * b.height)[0];
					return pane !== undefined && active !== undefined && active.left >= pane.left && active.right <= pane.right;
				},
				undefined,
				{ timeout: 5_000 },
			);
			expect(errors).toEqual([]);
		});
	});

	it("shows a call's status beside a long tool name, also in a narrow window (the name gives way)", async () => {
		await withCleanup(async (defer) => {
			const name = "fetch_a_document_from_the_company_knowledge_base_by_url";
			const fetchTool: AgentTool<typeof serviceParams> = { name, label: "Fetch", description: "f", parameters: serviceParams, execute: async () => ({ content: [{ type: "text", text: "fetched" }], details: {} }) };
			const scripted = createScriptedModel([{ content: [toolCall(name, { service: "docs" }, "f1")] }, { content: "Fetched." }]);
			const agent = new Agent({ initialState: { model: scripted.model, tools: [fetchTool] }, streamFn: scripted.streamFn });
			defer(() => agent.dispose());
			const visualizer = await attachVisualizer(agent.actor);
			defer(() => visualizer.close());
			const { page, errors } = await openPage(browser(), visualizer.url);
			defer(() => page.close());
			await page.setViewportSize({ width: 800, height: 800 });
			await page.waitForFunction(() => window.agentchart.activeState === "agent.idle");
			await agent.prompt("fetch the docs");
			await page.waitForFunction(() => window.agentchart.activeState === "agent.idle" && document.body.dataset["rendered"] === document.body.dataset["cursor"]);
			const placed = await page.evaluate(() => {
				const entry = document.querySelector('#transcript .entry[data-kind="tool"]');
				const badge = entry?.querySelector(".entry-head .badge");
				if (!entry || !badge) return undefined;
				const box = entry.getBoundingClientRect();
				const status = badge.getBoundingClientRect();
				return { text: badge.textContent, inside: status.left >= box.left && status.right <= box.right };
			});
			// Before, the badge was pushed past the card's right edge.
			expect(placed).toEqual({ text: "done", inside: true });
			expect(errors).toEqual([]);
		});
	});
});
