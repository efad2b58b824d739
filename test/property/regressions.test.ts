/**
 * Shrunk counterexamples of the property tests, kept as regression tests.
 */
import { describe, expect, it } from "vitest";
import { runScenario, type Scenario } from "./agent.property.test.js";

describe("property regressions", () => {
	it("streaming: dispose during the reply after a streamed tool call started ends that tool execution", async () => {
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

	it("streaming: abort during the reply after a streamed tool call started settles that call", async () => {
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
