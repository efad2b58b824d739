/**
 * A recording whose process was killed mid-write ends in a line without its newline. Before, it
 * did not replay at all ("Recording line N is not JSON") until that line was removed by hand.
 */
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { Agent } from "../../src/agent.js";
import { createAgentInspector } from "../../src/inspect/inspector.js";
import { readRecording, recordToNdjson } from "../../src/inspect/sinks.js";
import { createScriptedModel } from "../../src/providers/scripted.js";
import { useTempDirs } from "../temp-dirs.js";

const tempDir = useTempDirs("agentchart-recording-cut-");

async function recordedRun(): Promise<{ path: string; text: string }> {
	const path = join(await tempDir(), "run.ndjson");
	const scripted = createScriptedModel([{ content: "hello there" }]);
	const agent = new Agent({ initialState: { model: scripted.model }, streamFn: scripted.streamFn });
	const inspector = createAgentInspector();
	inspector.attach(agent.actor);
	const recording = recordToNdjson(inspector, path);
	await agent.prompt("hi");
	await recording.close();
	return { path, text: await readFile(path, "utf8") };
}

describe("a recording cut short", () => {
	it("replays the records before a last line cut mid-write", async () => {
		const { path, text } = await recordedRun();
		const whole = await readRecording(path);
		expect(whole.length).toBeGreaterThan(3);
		const lastLine = text.lastIndexOf("\n", text.length - 2) + 1;
		// Cut in the middle of the last record, as a kill during its write leaves it.
		await writeFile(path, text.slice(0, lastLine + Math.floor((text.length - lastLine) / 2)));
		expect(await readRecording(path)).toEqual(whole.slice(0, -1));
		// Only its newline lost: the record is whole, and kept.
		await writeFile(path, text.slice(0, -1));
		expect(await readRecording(path)).toEqual(whole);
	});

	it("still refuses a damaged line before the last", async () => {
		const { path, text } = await recordedRun();
		const lines = text.split("\n");
		lines[1] = (lines[1] as string).slice(0, 10);
		await writeFile(path, lines.join("\n"));
		await expect(readRecording(path)).rejects.toThrow(/Recording line 2 is not JSON/);
	});
});
