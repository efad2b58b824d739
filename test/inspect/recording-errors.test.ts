/**
 * A recording whose file cannot be written (a missing directory, a full disk) stops, says why
 * when it is closed, and leaves the agent and the visualizer running.
 */
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { Agent } from "../../src/agent.js";
import { createAgentInspector } from "../../src/inspect/inspector.js";
import { recordToNdjson } from "../../src/inspect/sinks.js";
import { attachVisualizer } from "../../src/inspect/visualizer-server.js";
import { createScriptedModel } from "../../src/providers/scripted.js";

function scriptedAgent(): Agent {
	const scripted = createScriptedModel([{ content: "first" }, { content: "second" }]);
	return new Agent({ initialState: { model: scripted.model }, streamFn: scripted.streamFn });
}

/** Whether something still answers on `url`. */
function answers(url: string): Promise<boolean> {
	return new Promise((resolve) => {
		const req = request(url, (res) => {
			res.resume();
			resolve(true);
		});
		req.on("error", () => resolve(false));
		req.end();
	});
}

/** Waits until the stream's error has been told (it is emitted on a later tick). */
async function untilReported(reported: { mock: { calls: unknown[] } }): Promise<void> {
	while (reported.mock.calls.length === 0) await new Promise((resolve) => setImmediate(resolve));
}

/** An agent recorded to `path`, after one prompt; `end` disposes it and gives `console.error` back. */
async function recordedPrompt(path: string) {
	const reported = vi.spyOn(console, "error").mockImplementation(() => {});
	const agent = scriptedAgent();
	const inspector = createAgentInspector();
	inspector.attach(agent.actor);
	const recording = recordToNdjson(inspector, path);
	const end = () => {
		agent.dispose();
		reported.mockRestore();
	};
	try {
		await agent.prompt("one");
	} catch (error) {
		end();
		throw error;
	}
	return { agent, recording, reported, end };
}

describe("a recording that cannot be written", () => {
	it("in a directory that does not exist: stops, the agent runs on, and close rejects with the reason", async () => {
		const { agent, recording, reported, end } = await recordedPrompt("/nonexistent-agentchart-dir/run.ndjson");
		try {
			await untilReported(reported);
			await agent.prompt("two");
			expect(agent.state.messages).toHaveLength(4);
			await expect(recording.close()).rejects.toMatchObject({ code: "ENOENT" });
			expect(String(reported.mock.calls[0]?.[0])).toContain("/nonexistent-agentchart-dir/run.ndjson");
		} finally {
			end();
		}
	});

	it("closed at once, before the file's failure is told: close still rejects with it (the guide's own sequence)", async () => {
		const { recording, end } = await recordedPrompt("/nonexistent-agentchart-dir/run.ndjson");
		try {
			await expect(recording.close()).rejects.toMatchObject({ code: "ENOENT" });
		} finally {
			end();
		}
	});

	it.skipIf(!existsSync("/dev/full"))("on a full disk: the same", async () => {
		const { agent, recording, reported, end } = await recordedPrompt("/dev/full");
		try {
			await untilReported(reported);
			await agent.prompt("two");
			expect(agent.state.messages).toHaveLength(4);
			await expect(recording.close()).rejects.toMatchObject({ code: "ENOSPC" });
		} finally {
			end();
		}
	});

	it("given to attachVisualizer: close still stops the server", async () => {
		const reported = vi.spyOn(console, "error").mockImplementation(() => {});
		const agent = scriptedAgent();
		const directory = mkdtempSync(join(tmpdir(), "agentchart-rec-"));
		const visualizer = await attachVisualizer(agent.actor, { record: join(directory, "missing", "run.ndjson") });
		try {
			await agent.prompt("one");
			await untilReported(reported);
			expect(await answers(visualizer.url)).toBe(true);
			await expect(visualizer.close()).rejects.toMatchObject({ code: "ENOENT" });
			expect(await answers(visualizer.url)).toBe(false);
		} finally {
			await visualizer.close().catch(() => undefined);
			agent.dispose();
			rmSync(directory, { recursive: true, force: true });
			reported.mockRestore();
		}
	});
});
