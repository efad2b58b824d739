// startVisualizerServer's and attachVisualizer's options, checked before anything starts. A port
// given as text ("4777", as it comes from an environment variable) went to `listen` as the path of
// a local socket, and the server said it ran at http://127.0.0.1:undefined/; a replay that was
// not a list of records served a page with nothing on it; a misspelt option was ignored.
import { describe, expect, it } from "vitest";
import { Agent } from "../../src/agent.js";
import { agentMachine } from "../../src/machines/agent-machine.js";
import { attachVisualizer, createAgentInspector, startVisualizerServer } from "../../src/inspect/index.js";
import { createScriptedModel } from "../../src/testing/index.js";

const inspector = createAgentInspector();
const serverRefusals: [string, unknown, string][] = [
	["a port as text", { port: "0" }, 'startVisualizerServer(options): port must be a whole number from 0 to 65535 (0: a free one), got "0"'],
	["a port out of range", { port: 70_000 }, "startVisualizerServer(options): port must be a whole number from 0 to 65535 (0: a free one), got 70000"],
	["a misspelt option", { prot: 4777 }, 'startVisualizerServer(options): unknown option "prot" (known: port, machine, inspector, replay)'],
	["a replay that is not records", { replay: "run.ndjson" }, 'startVisualizerServer(options): replay must be the records of a recording (readRecording(path) gives them), got "run.ndjson"'],
	["a replay holding something else", { replay: [{ type: "@xstate.event" }, 5] }, "startVisualizerServer(options): replay[1] must be an inspection record ({ type, ... }), got 5"],
	["both live and replay", { inspector, replay: [] }, "startVisualizerServer(options): give inspector (live) or replay (a recording), not both"],
	["an inspector that is none", { inspector: {} }, "startVisualizerServer(options): inspector must be an inspector from createAgentInspector(), got {}"],
	["a machine that is none", { machine: "agent" }, 'startVisualizerServer(options): machine must be a state machine (from XState\'s createMachine or setup().createMachine), got "agent"'],
	["null", null, "startVisualizerServer(options): options must be an object of options, got null"],
];

describe("startVisualizerServer(options)", () => {
	it.each(serverRefusals)("refuses %s with a TypeError naming the option", async (_, options, message) => {
		await expect(startVisualizerServer(options as never)).rejects.toThrow(new TypeError(message));
	});

	it("takes every documented option", async () => {
		for (const options of [{}, { port: 0, machine: agentMachine, inspector }, { replay: [] }, { port: undefined, replay: undefined }]) {
			const server = await startVisualizerServer(options);
			expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
			await server.close();
		}
	});
});

describe("attachVisualizer(actor, options)", () => {
	const agent = () => {
		const scripted = createScriptedModel([{ content: "Hi" }]);
		return new Agent({ initialState: { model: scripted.model }, streamFn: scripted.streamFn });
	};
	it.each([
		["a port as text", { port: "4777" }, 'attachVisualizer(actor, options): port must be a whole number from 0 to 65535 (0: a free one), got "4777"'],
		["a record that is no path", { record: true }, "attachVisualizer(actor, options): record must be the path of a file to write, got true"],
		["a misspelt option", { recrod: "run.ndjson" }, 'attachVisualizer(actor, options): unknown option "recrod" (known: port, record, inspector)'],
	])("refuses %s before it attaches anything", async (_, options, message) => {
		const own = createAgentInspector();
		const records: unknown[] = [];
		own.subscribe((batch) => records.push(...batch));
		const refused = agent();
		await expect(attachVisualizer(refused.actor, { ...(options as object), inspector: own } as never)).rejects.toThrow(new TypeError(message));
		// Nothing was attached: a run of the agent is not inspected.
		await refused.prompt("Hello");
		own.flush();
		expect(records).toEqual([]);
	});
});
