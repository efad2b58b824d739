/**
 * Shrunk counterexamples of the property tests, kept as regression tests.
 */
import { describe, expect, it } from "vitest";
import { runScenario, type Scenario } from "./agent.property.test.js";

describe("property regressions", () => {
	// BUG: dispose while a streaming-mode tool runs and the reply still streams leaves tool_execution_start without tool_execution_end (closeRunAbruptly's no-assistant branch ignores run.batch).
	it.skip("streaming: dispose during the reply after a streamed tool call started ends that tool execution", async () => {
		const scenario: Scenario = {
			replies: [
				{ blocks: ["tool", "text"], stop: "auto" },
				{ blocks: ["text"], stop: "auto" },
			],
			tools: [{ latency: 0, fail: false, honoursAbort: false }],
			schedule: [{ at: 9, command: "dispose" }],
		};
		expect(await runScenario("streaming", scenario)).toEqual([]);
	});

	// BUG: streaming mode, abort while the reply streams after a tool call started: tool-dispatching's runAborted branch settles only queued/preparing/prepared calls, so the running call gets no tool_execution_end and no tool result, and its tool actor outlives the run.
	it.skip("streaming: abort during the reply after a streamed tool call started settles that call", async () => {
		const scenario: Scenario = {
			replies: [
				{ blocks: ["tool", "text"], stop: "auto" },
				{ blocks: ["text"], stop: "auto" },
			],
			tools: [{ latency: 0, fail: false, honoursAbort: false }],
			schedule: [{ at: 5, command: "abort" }],
		};
		expect(await runScenario("streaming", scenario)).toEqual([]);
	});
});
