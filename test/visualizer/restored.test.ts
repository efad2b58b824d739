/**
 * The page on an agent restored by `Agent.load` while its run waits for a person (docs/durable.md):
 * it shows what the agent said and the call waiting for approval before anyone decides, and
 * once approved, a wait timed from the attach.
 */
import { describe, expect, it } from "vitest";
import { chromiumAvailable, openVisualizer, screenshot, texts, useBrowser, withCleanup } from "./browser.js";
import { loadedWaitingForApproval } from "./scenarios.js";

describe.skipIf(!chromiumAvailable)("the visualizer on a restored session", { timeout: 60_000 }, () => {
	const browser = useBrowser();

	it("shows the loaded transcript and the call waiting for approval, then the approval with a wait timed from the attach", async () => {
		await withCleanup(async (defer) => {
			const agent = await loadedWaitingForApproval();
			defer(() => agent.dispose());
			const { page, errors } = await openVisualizer(browser(), agent.actor, defer);
			await page.waitForFunction(() => document.querySelectorAll('#transcript .entry[data-kind="approval"][data-status="open"]').length === 1);
			expect(await page.locator("#active-state").textContent()).toBe("running.awaiting-approval");
			expect(await texts(page, "#transcript .entry .who")).toEqual(["User", "Assistant", "Tool", "Approval"]);
			expect(await texts(page, "#transcript .entry.user .text")).toEqual(["Deploy billing"]);
			expect(await texts(page, "#transcript .turn-divider")).toEqual(["Run 1 · Turn 1"]);
			expect(await texts(page, '#transcript .entry[data-kind="tool"] .badge')).toEqual(["waiting for approval"]);
			expect(await texts(page, '#transcript .entry[data-kind="approval"] .badge')).toEqual(["waiting"]);
			expect(await texts(page, "#timeline .bar-approval .bar-label")).toEqual(["approval · deploy · waiting"]);
			await screenshot(page, "visualizer-restored-approval.png");

			await page.waitForTimeout(300);
			await agent.approve("call-1");
			await agent.waitForIdle();
			await page.waitForFunction(() => window.agentchart.activeState === "agent.idle" && document.querySelectorAll('#timeline .bar[data-status="open"]').length === 0);
			expect(await texts(page, '#transcript .entry[data-kind="approval"] .badge')).toEqual(["approved"]);
			const wait = await page.locator('#transcript .entry[data-kind="approval"] .duration').textContent();
			// At least the 300 ms the page watched it wait, not "0 ms".
			expect(wait).toMatch(/^(\d{3,} ms|\d+(\.\d+)? s)$/);
			expect(await texts(page, '#transcript .entry[data-kind="tool"] .badge')).toEqual(["done"]);
			expect(await texts(page, "#transcript .entry .who")).toEqual(["User", "Assistant", "Tool", "Approval", "Assistant"]);
			await screenshot(page, "visualizer-restored-approved.png");
			expect(errors).toEqual([]);
		});
	});
});
