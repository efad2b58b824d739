/**
 * The class of bug: an options object whose misspelt key is ignored without a word. The option
 * then keeps its default, and what the caller meant silently does not happen: a test runs fewer
 * scenarios than it says, a hub's listener sees nothing, an approval runs the model's arguments.
 * Every options object agentchart defines itself is checked against the options its function
 * takes; a misspelt one throws a TypeError naming it, before anything starts.
 *
 * Left open on purpose: the `Agent`'s own options and the stream options (pi's and pi-ai's
 * shapes, which code written for pi fills with what pi accepts), each MCP server's configuration
 * (read from other tools' JSON files, which carry keys of their own; the options around them are
 * checked) and the reply layer (OpenClaw's configuration).
 */
import { describe, expect, it } from "vitest";
import { Agent } from "../../src/agent.js";
import { createFileStore } from "../../src/durable/file-store.js";
import { createAgentInspector } from "../../src/inspect/inspector.js";
import { attachVisualizer, startVisualizerServer } from "../../src/inspect/visualizer-server.js";
import { connectMcpServers } from "../../src/mcp/index.js";
import { createOpenAICompatibleModel } from "../../src/providers/openai-models.js";
import { createScriptedModel } from "../../src/providers/scripted.js";
import { createSessionClient } from "../../src/restate/client.js";
import { createEventHub } from "../../src/restate/event-hub.js";
import { createAgentSessions } from "../../src/restate/index.js";
import { checkAgentInvariants, recordAgent } from "../../src/testing/agent-checks.js";
import { exploreAgent } from "../../src/testing/explore.js";
import { createFaultyModel } from "../../src/testing/faulty-model.js";
import { fuzzAgent } from "../../src/testing/fuzz.js";
import type { AgentFactory } from "../../src/testing/walk/cast.js";
import { useTempDirs } from "../temp-dirs.js";

const MISSPELT = "zzMisspelt";
/** Options as a caller without types writes them: one key more than the function takes. */
const withMisspelt = <T extends object>(options: T): T => ({ ...options, [MISSPELT]: 1 });

const tempDir = useTempDirs("agentchart-misspelt-");
const model = createScriptedModel([]).model;
const factory: AgentFactory = (kit) => new Agent(kit.options({ initialState: { model } }));
const noCall = () => {
	throw new Error("the test reached the network");
};

/** Each public function that takes an options object of agentchart's own, called with a misspelt option. */
const CALLS: [string, () => unknown][] = [
	["exploreAgent", () => exploreAgent(factory, withMisspelt({ restores: false }))],
	["fuzzAgent", () => fuzzAgent(factory, withMisspelt({ runs: 1, seed: 1 }))],
	["checkAgentInvariants", () => checkAgentInvariants([], { messages: [], isStreaming: false, pendingToolCalls: new Set(), streamingMessage: undefined }, withMisspelt({}))],
	[
		"recordAgent(...).check",
		() => {
			const recording = recordAgent(new Agent({ initialState: { model } }));
			try {
				return recording.check(withMisspelt({}));
			} finally {
				recording.stop();
			}
		},
	],
	["createOpenAICompatibleModel", () => createOpenAICompatibleModel(withMisspelt({ baseUrl: "http://127.0.0.1:11434/v1", id: "qwen3:8b" }))],
	["createScriptedModel", () => createScriptedModel([], withMisspelt({ delayMs: 0 }))],
	["createFaultyModel", () => createFaultyModel([], withMisspelt({ faults: {} }))],
	["createFileStore", async () => createFileStore(await tempDir(), withMisspelt({ fsync: "never" as const }))],
	["createAgentInspector", () => createAgentInspector(withMisspelt({}))],
	["startVisualizerServer", () => startVisualizerServer(withMisspelt({ port: 0 }))],
	["attachVisualizer", () => attachVisualizer(new Agent({ initialState: { model } }).actor, withMisspelt({ port: 0 }))],
	["createAgentSessions", () => createAgentSessions(withMisspelt({ agent: () => ({}) }))],
	["createSessionClient", () => createSessionClient(withMisspelt({ ingressUrl: "http://127.0.0.1:1", fetch: noCall }))],
	["createSessionClient(...).session(id).approve", () => createSessionClient({ ingressUrl: "http://127.0.0.1:1", fetch: noCall }).session("s1").approve("call-1", withMisspelt({}))],
	["createEventHub", () => createEventHub(withMisspelt({}))],
	["connectMcpServers", () => connectMcpServers(withMisspelt({ servers: {} }))],
];

describe("a misspelt option is refused, not ignored", () => {
	it.each(CALLS)("by %s", async (_name, call) => {
		let thrown: unknown;
		try {
			await call();
		} catch (error) {
			thrown = error;
		}
		expect(thrown).toBeInstanceOf(TypeError);
		expect((thrown as Error).message).toContain(`"${MISSPELT}"`);
	});
});
