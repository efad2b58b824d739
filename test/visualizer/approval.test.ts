/**
 * Approvals in the page: while a person is asked, the chart sits in `awaiting-approval`, the
 * conversation and the timeline say the calls wait (not that they run), and once decided each
 * shows its decision: approved, or rejected with the reason.
 */
import { describe, expect, it } from "vitest";
import { chromiumAvailable, openVisualizer, screenshot, texts, useBrowser, withCleanup } from "./browser.js";
import { deployAgent } from "./scenarios.js";

describe.skipIf(!chromiumAvailable)("approvals in the visualizer", { timeout: 60_000 }, () => {
	const browser = useBrowser();

	it("shows calls waiting for a person while they wait, then each decision: approved, or rejected with its reason", async () => {
		await withCleanup(async (defer) => {
			const { agent, asked } = deployAgent();
			defer(() => agent.dispose());
			const { page, errors } = await openVisualizer(browser(), agent.actor, defer);

			const run = agent.prompt("Deploy billing and search");
			defer(() => run);
			// Cleanup runs in reverse: a failing step lets the waiting calls go (rejected) first.
			defer(() => Promise.all(agent.pendingApprovals.map((call) => agent.reject(call.toolCallId, "test cleanup"))));
			await asked;
			await page.waitForFunction(() => document.querySelectorAll('#transcript .entry[data-kind="approval"][data-status="open"]').length === 2);
			expect(await page.locator("#active-state").textContent()).toBe("running.awaiting-approval");
			expect(await texts(page, '#transcript .entry[data-kind="approval"] .badge')).toEqual(["waiting", "waiting"]);
			expect(await texts(page, '#transcript .entry[data-kind="tool"] .badge')).toEqual(["waiting for approval", "waiting for approval"]);
			expect(await texts(page, "#timeline .bar-approval .bar-label")).toEqual(["approval · deploy · waiting", "approval · deploy · waiting"]);
			expect(await texts(page, "#timeline .bar-tool .bar-label")).toEqual(["deploy · waiting for approval", "deploy · waiting for approval"]);
			await screenshot(page, "visualizer-approval.png");

			await agent.approve("d1");
			await agent.reject("d2", "not on a Friday");
			await run;
			await page.waitForFunction(() => window.agentchart.activeState === "agent.idle" && document.querySelectorAll('#timeline .bar[data-status="open"]').length === 0);
			expect(await texts(page, '#transcript .entry[data-kind="approval"] .badge')).toEqual(["approved", "rejected"]);
			expect(await texts(page, '#transcript .entry[data-kind="approval"] .span-output .result-text')).toEqual(["approved", "rejected: not on a Friday"]);
			expect(await texts(page, '#transcript .entry[data-kind="tool"] .badge')).toEqual(["done", "error"]);
			expect(await page.locator('#timeline .bar-approval[data-status="error"]').count()).toBe(1);
			expect(errors).toEqual([]);
		});
	});
});
