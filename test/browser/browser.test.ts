/**
 * agentchart in a web page: an app importing `agentchart`, `agentchart/reply` and
 * `agentchart/testing` bundles for the browser from the built package (no `node:` import, the
 * file store left out), and runs in headless Chromium: agents with tools, steering, aborts,
 * snapshots, a memory store with approvals, compaction, reply assembly, and both built-in
 * providers streaming from local servers called cross-origin. Needs `npm run build` first.
 */
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AnthropicTestServer, startAnthropicServer, textReply } from "../providers/anthropic-server.js";
import { type OpenAITestServer, startOpenAIServer, textReply as openAITextReply } from "../providers/openai-server.js";
import { chromiumAvailable, useBrowser } from "../visualizer/browser.js";
import { type BrowserBundle, bundleApp, openApp, runScenario, serveApp } from "./browser-app.js";

describe.skipIf(!chromiumAvailable)("agentchart in a browser", () => {
	const browser = useBrowser();
	let bundle: BrowserBundle;
	let app: Awaited<ReturnType<typeof serveApp>> | undefined;
	let anthropic: AnthropicTestServer | undefined;
	let openai: OpenAITestServer | undefined;
	let page: Page;
	let errors: string[];

	beforeAll(async () => {
		bundle = await bundleApp();
		app = await serveApp(bundle);
		anthropic = await startAnthropicServer({ cors: true });
		openai = await startOpenAIServer({ cors: true });
		({ page, errors } = await openApp(browser(), bundle, app.url));
		// esbuild bundles a few MB and the page parses them: seconds on a loaded 2-core machine.
	}, 60_000);
	afterAll(async () => {
		await page?.close();
		await app?.close();
		await anthropic?.close();
		await openai?.close();
	});

	it("bundles from dist/ through the package's exports, with the file store replaced by its browser stand-in", () => {
		expect(bundle.inputs).toContain("dist/index.browser.js");
		expect(bundle.inputs).toContain("dist/reply/index.js");
		expect(bundle.inputs).toContain("dist/durable/file-store.browser.js");
		expect(bundle.inputs.filter((input) => input.startsWith("src/") || input === "dist/durable/file-store.js")).toEqual([]);
	});

	it("runs parallel tools, and the testing kit's invariants hold", async () => {
		expect(await runScenario(page, "parallelTools")).toEqual({ log: ["start a", "start b", "end b", "end a"], results: ["done a", "done b"], reply: "Both done.", violations: 0 });
	});

	it("runs sequential and streaming tools", async () => {
		const expected = { log: ["start a", "end a", "start b", "end b"], results: ["done a", "done b"] };
		expect(await runScenario(page, "sequentialTools")).toEqual({ ...expected, reply: "Both done." });
		expect(await runScenario(page, "streamingTools")).toEqual({ ...expected, reply: "Streamed." });
	});

	it("delivers a steering message and a follow-up", async () => {
		expect(await runScenario(page, "steeringAndFollowUp")).toEqual({ roles: ["user", "user", "assistant", "user", "assistant"], reply: "Followed up.", calls: 2 });
	});

	it("aborts mid-stream and mid-tool", async () => {
		expect(await runScenario(page, "abortMidStream")).toMatchObject({ stopReason: "aborted", isStreaming: false });
		expect(await runScenario(page, "abortMidTool")).toEqual({ log: ["start slow"], results: ["aborted slow"], calls: 1, isStreaming: false });
	});

	it("restores a snapshot that went through JSON", async () => {
		expect(await runScenario(page, "snapshotRestore")).toEqual({ roles: ["user", "assistant", "user", "assistant"], reply: "Two." });
	});

	it("keeps a session waiting for approval in a memory store, and another agent finishes it", async () => {
		expect(await runScenario(page, "memoryStoreApproval")).toEqual({ pending: ["call-1"], log: ["start billing", "end billing"], results: ["done billing"], reply: "Deployed." });
	});

	it("compacts on request", async () => {
		expect(await runScenario(page, "manualCompaction")).toMatchObject({ first: "compactionSummary" });
	});

	it("assembles replies and describes tool calls (agentchart/reply)", async () => {
		expect(await runScenario(page, "replies")).toEqual({ blocks: ["First block.\n\nSecond block."], partials: expect.any(Number), toolMetas: [{ toolName: "read", meta: "/home/user/notes.txt" }] });
	});

	it("shows what a tool threw when it is not an Error", async () => {
		expect(await runScenario(page, "toolThrowsNonError")).toEqual({ results: ['{"code":"EPERM","path":"/etc"}'] });
	});

	it("rejects exploreAgent and fuzzAgent in a page with an error that says they need Node", async () => {
		const { failures } = (await runScenario(page, "nodeOnlyTesting")) as { failures: string[] };
		expect(failures).toEqual([expect.stringMatching(/^Error: exploreAgent \(agentchart\/testing\) runs on Node/), expect.stringMatching(/^Error: fuzzAgent \(agentchart\/testing\) runs on Node/)]);
	});

	it("says what to use instead when createFileStore is called in a page", async () => {
		const result = await runScenario(page, "fileStore");
		expect(result["threw"]).toBe(true);
		expect(result["message"]).toMatch(/not available in a browser bundle: use createMemoryStore\(\)/);
	});

	it("streams a reply from an Anthropic-compatible server", async () => {
		anthropic?.respond({ kind: "sse", events: textReply("Hello from Claude") });
		expect(await runScenario(page, "anthropic", anthropic?.baseUrl)).toEqual({ reply: "Hello from Claude", deltas: 1 });
		expect(anthropic?.requests.map((request) => [request.url, request.headers["anthropic-dangerous-direct-browser-access"]])).toEqual([["/v1/messages", "true"]]);
	});

	it("says that the Anthropic key is missing (no ReferenceError on process)", async () => {
		expect(await runScenario(page, "anthropicWithoutKey", anthropic?.baseUrl)).toEqual({ errorMessage: "No API key for provider anthropic: set ANTHROPIC_API_KEY or pass apiKey" });
	});

	it("streams a reply from an OpenAI-compatible server", async () => {
		openai?.respond({ kind: "sse", frames: openAITextReply("Hello from local") });
		expect(await runScenario(page, "openAICompatible", openai?.baseUrl)).toEqual({ reply: "Hello from local", deltas: 1 });
	});

	it("leaves no uncaught error in the page", () => {
		expect(errors).toEqual([]);
	});

	it("keeps a stored session in a page that is not a secure context (no crypto.randomUUID)", async () => {
		const insecure = await openApp(browser(), bundle);
		try {
			expect(await insecure.page.evaluate(() => window.isSecureContext)).toBe(false);
			expect(await runScenario(insecure.page, "memoryStoreApproval")).toMatchObject({ pending: ["call-1"], reply: "Deployed." });
			expect(insecure.errors).toEqual([]);
		} finally {
			await insecure.page.close();
		}
	});
});
