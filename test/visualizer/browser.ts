/**
 * Debian's Chromium driven by playwright-core, for the visualizer tests: one browser per test
 * file, a page per test at 1280×800 (the size the issue measured), page errors collected, and
 * everything a test opens closed when it ends, also when it fails.
 */
import { existsSync, mkdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { type Browser, type Page, chromium } from "playwright-core";
import { afterAll, beforeAll } from "vitest";
import type { InspectableActorRef } from "../../src/types/actor-shapes.js";
import { type AttachedVisualizer, attachVisualizer } from "../../src/inspect/visualizer-server.js";

export const CHROMIUM = "/usr/bin/chromium";
export const chromiumAvailable = existsSync(CHROMIUM);
if (!chromiumAvailable && process.env["CI"]) throw new Error(`${CHROMIUM} is missing: CI must install Debian's chromium package (see .ci/run).`);
if (!chromiumAvailable) console.warn(`Skipping the visualizer browser tests: ${CHROMIUM} is not installed (apt-get install -y chromium).`);

/** Launches the browser before a file's tests and closes it after them. */
export function useBrowser(): () => Browser {
	let browser: Browser | undefined;
	beforeAll(async () => {
		browser = await chromium.launch({
			executablePath: CHROMIUM,
			args: ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
		});
	});
	afterAll(async () => {
		await browser?.close();
	});
	return () => {
		if (!browser) throw new Error("the browser is not running");
		return browser;
	};
}

/** A page at 1280×800 that records page errors and every URL it requested. */
export async function openPage(browser: Browser, url: string): Promise<{ page: Page; errors: string[]; requests: string[] }> {
	const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
	// Fail with the waiting step named, before the test's own timeout (60 s).
	page.setDefaultTimeout(15_000);
	const errors: string[] = [];
	const requests: string[] = [];
	page.on("pageerror", (error) => errors.push(error.message));
	page.on("request", (request) => requests.push(request.url()));
	await page.goto(url);
	await page.waitForSelector("svg.chart");
	return { page, errors, requests };
}

/** Where the tests leave their screenshots. */
const TEST_OUTPUT = fileURLToPath(new URL("../../test-output/", import.meta.url));

/** The page's screenshot as `test-output/<name>`. */
export async function screenshot(page: Page, name: string): Promise<void> {
	mkdirSync(TEST_OUTPUT, { recursive: true });
	await page.screenshot({ path: `${TEST_OUTPUT}${name}` });
}

/** The text of every element `selector` finds. */
export function texts(page: Page, selector: string): Promise<string[]> {
	return page.locator(selector).allTextContents();
}

/**
 * The visualizer attached to `actor` and a page open on it that the visualizer has seen, both
 * closed through `defer` (see {@link withCleanup}).
 */
export async function openVisualizer(browser: Browser, actor: InspectableActorRef, defer: (close: () => unknown) => void): Promise<{ visualizer: AttachedVisualizer; page: Page; errors: string[] }> {
	const visualizer = await attachVisualizer(actor);
	defer(() => visualizer.close());
	const { page, errors } = await openPage(browser, visualizer.url);
	defer(() => page.close());
	await visualizer.waitForPage();
	return { visualizer, page, errors };
}

/** Runs `body`, then closes what was opened for it, in reverse order, whatever happened. */
export async function withCleanup(body: (defer: (close: () => unknown) => void) => Promise<void>): Promise<void> {
	const closers: (() => unknown)[] = [];
	try {
		await body((close) => closers.push(close));
	} finally {
		for (const close of closers.reverse()) {
			try {
				await close();
			} catch (error) {
				console.error("cleanup failed", error);
			}
		}
	}
}

/** The page's cursor position once it has rendered it. */
export async function renderedCursor(page: Page): Promise<number> {
	await page.waitForFunction(() => document.body.dataset["rendered"] === document.body.dataset["cursor"]);
	return page.evaluate(() => window.agentchart.cursor);
}
