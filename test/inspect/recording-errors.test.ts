/**
 * A recording whose file cannot be written (a missing directory, a full disk) stops, says why
 * when it is closed, and leaves the agent and the visualizer running.
 */
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { createServer, request } from "node:http";
import type { AddressInfo } from "node:net";
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

/** A port free now: taken from the system, then let go. */
async function freePort(): Promise<number> {
	const probe = createServer();
	await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
	const { port } = probe.address() as AddressInfo;
	await new Promise<void>((resolve) => probe.close(() => resolve()));
	return port;
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

	it("given to attachVisualizer, a file that cannot be opened fails it at once, nothing left serving, attached or printed", async () => {
		const reported = vi.spyOn(console, "error").mockImplementation(() => {});
		const agent = scriptedAgent();
		const directory = mkdtempSync(join(tmpdir(), "agentchart-rec-"));
		const inspector = createAgentInspector();
		const seen: unknown[] = [];
		inspector.subscribe((records) => seen.push(...records));
		try {
			for (const [path, code] of [
				[join(directory, "missing", "run.ndjson"), "ENOENT"],
				[directory, "EISDIR"],
			] as const) {
				const port = await freePort();
				const attempt = attachVisualizer(agent.actor, { record: path, inspector, port });
				await expect(attempt).rejects.toThrow(`attachVisualizer: cannot record to ${JSON.stringify(path)}: ${code}`);
				await expect(attempt).rejects.toMatchObject({ cause: { code } });
				expect(await answers(`http://127.0.0.1:${port}/`)).toBe(false);
			}
			// Detached: the run reaches the inspector no more.
			seen.length = 0;
			await agent.prompt("one");
			inspector.flush();
			expect(seen).toEqual([]);
			expect(reported).not.toHaveBeenCalled();
		} finally {
			agent.dispose();
			rmSync(directory, { recursive: true, force: true });
			reported.mockRestore();
		}
	});

	it("recordToNdjson's opened() says at once why the file cannot be opened (not printed then), and resolves for one that can", async () => {
		const reported = vi.spyOn(console, "error").mockImplementation(() => {});
		const directory = mkdtempSync(join(tmpdir(), "agentchart-rec-"));
		try {
			const failing = recordToNdjson(createAgentInspector(), join(directory, "missing", "run.ndjson"));
			await expect(failing.opened()).rejects.toMatchObject({ code: "ENOENT" });
			await expect(failing.close()).rejects.toMatchObject({ code: "ENOENT" });
			expect(reported).not.toHaveBeenCalled();
			const working = recordToNdjson(createAgentInspector(), join(directory, "run.ndjson"));
			await working.opened();
			await working.close();
			expect(existsSync(join(directory, "run.ndjson"))).toBe(true);
		} finally {
			rmSync(directory, { recursive: true, force: true });
			reported.mockRestore();
		}
	});
});
