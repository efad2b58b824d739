/**
 * Closing twice is no error (a test's own close, then its afterEach), and a file of JSON lines
 * that are not inspection records is refused when it is read, naming the line.
 */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { Agent } from "../../src/agent.js";
import { createAgentInspector } from "../../src/inspect/inspector.js";
import { parseRecording, readRecording, recordToNdjson } from "../../src/inspect/sinks.js";
import { attachVisualizer } from "../../src/inspect/visualizer-server.js";
import { createScriptedModel } from "../../src/providers/scripted.js";
import { useTempDirs } from "../temp-dirs.js";

const tempDir = useTempDirs("agentchart-close-");

describe("close, called twice", () => {
	it("resolves both times for a recording, and the file holds the run", async () => {
		const scripted = createScriptedModel([{ content: "hello" }]);
		const agent = new Agent({ initialState: { model: scripted.model }, streamFn: scripted.streamFn });
		const inspector = createAgentInspector();
		inspector.attach(agent.actor);
		const path = join(await tempDir(), "run.ndjson");
		const recording = recordToNdjson(inspector, path);
		await agent.prompt("hi");
		await recording.close();
		await expect(recording.close()).resolves.toBeUndefined();
		agent.dispose();
		expect((await readRecording(path)).length).toBeGreaterThan(0);
	});

	it("resolves both times for a visualizer attached with a recording", async () => {
		const scripted = createScriptedModel([{ content: "hello" }]);
		const agent = new Agent({ initialState: { model: scripted.model }, streamFn: scripted.streamFn });
		const visualizer = await attachVisualizer(agent.actor, { port: 0, record: join(await tempDir(), "run.ndjson") });
		await agent.prompt("hi");
		await visualizer.close();
		await expect(visualizer.close()).resolves.toBeUndefined();
		agent.dispose();
	});
});

describe("parseRecording", () => {
	const record = JSON.stringify({ type: "@agentchart.dropped", seq: 0, count: 1 });
	for (const line of ['{"level":"info","msg":"server started"}', "[1,2]", "42", '"text"', "null", '{"type":5}']) {
		it(`refuses a line that is not an inspection record, naming it: ${line}`, () => {
			expect(() => parseRecording(`${record}\n${line}\n`)).toThrow(/^Recording line 2 is not an inspection record/);
		});
	}

	it("still leaves out a last line a killed process cut short", () => {
		expect(parseRecording(`${record}\n{"type":"@xst`)).toHaveLength(1);
	});
});
