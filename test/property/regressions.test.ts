/**
 * Shrunk counterexamples of the property tests, kept as regression tests.
 */
import { describe, expect, it } from "vitest";
import { runScenario, type Scenario } from "./scenario.js";

/** The shape most shrunk counterexamples take: two plain text replies, one instant tool. */
function twoTextReplies(schedule: Scenario["schedule"], options: NonNullable<Scenario["options"]>): Scenario {
	return {
		replies: [
			{ blocks: ["text"], stop: "auto" },
			{ blocks: ["text"], stop: "auto" },
		],
		tools: [{ latency: 0, fail: false, honoursAbort: false, hangs: false }],
		schedule,
		options,
	};
}

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

	it("streaming: a reply aborted after its tool call streamed, then dispose, leaves no orphan tool result", async () => {
		// The call never started (the run was aborted first); dispose must not answer it either,
		// or its result would follow a failed message that providers leave out.
		const scenario: Scenario = {
			replies: [
				{ blocks: ["tool", "tool"], stop: "auto" },
				{ blocks: ["text"], stop: "auto" },
				{ blocks: ["text"], stop: "auto" },
			],
			tools: [{ latency: 0, fail: false, honoursAbort: false }],
			schedule: [
				{ at: 13, command: "dispose" },
				{ at: 5, command: "abort" },
			],
		};
		expect(await runScenario("streaming", scenario)).toEqual([]);
	});

	it("parallel: abort while a tool hangs without honouring its signal still ends the run", async () => {
		const scenario: Scenario = {
			replies: [
				{ blocks: ["tool"], stop: "auto" },
				{ blocks: ["text"], stop: "auto" },
			],
			tools: [{ latency: 0, fail: false, honoursAbort: false, hangs: true }],
			schedule: [{ at: 12, command: "abort" }],
		};
		expect(await runScenario("parallel", scenario)).toEqual([]);
	});
	it("parallel: a tool that timed out and then failed late is not shown to afterToolCall, whose answer would be dropped", async () => {
		const scenario: Scenario = {
			replies: [
				{ blocks: ["text"], stop: "auto" },
				{ blocks: ["tool"], stop: "auto" },
			],
			tools: [
				{ latency: 0, fail: false, honoursAbort: true, hangs: true },
				{ latency: 0, fail: false, honoursAbort: false, hangs: false },
			],
			schedule: [{ at: 18, command: "steer" }],
			options: { steeringMode: "one-at-a-time", followUpMode: "one-at-a-time", before: ["none"], after: ["flipError"], slowListenerMs: 0 },
		};
		expect(await runScenario("parallel", scenario)).toEqual([]);
	});
	it("streaming: a call queued behind a sequential one never starts after the reply failed, though the running one settles before a slow listener let the failure through", async () => {
		const scenario: Scenario = {
			replies: [
				{ blocks: ["serialTool", "missingTool", "serialTool"], stop: "error" },
				{ blocks: ["text"], stop: "auto" },
				{ blocks: ["text"], stop: "auto" },
			],
			tools: [{ latency: 12, fail: false, honoursAbort: false, hangs: false }],
			schedule: [],
			options: { steeringMode: "one-at-a-time", followUpMode: "one-at-a-time", before: ["none"], after: ["none"], slowListenerMs: 3 },
		};
		expect(await runScenario("streaming", scenario)).toEqual([]);
	});
	it("streaming: a call beforeToolCall allows after an abort never executes (the batch actor asked the hook, then ran the call)", async () => {
		const scenario: Scenario = {
			replies: [
				{ blocks: ["tool", "text"], stop: "auto" },
				{ blocks: ["text"], stop: "overflow" },
				{ blocks: ["missingTool", "tool"], stop: "auto" },
			],
			tools: [{ latency: 0, fail: false, honoursAbort: false, hangs: false }],
			schedule: [{ at: 43, command: "abort" }],
			options: { steeringMode: "one-at-a-time", followUpMode: "one-at-a-time", before: ["allow"], after: ["none"], slowListenerMs: 1 },
		};
		expect(await runScenario("streaming", scenario)).toEqual([]);
	});
	it("parallel: dispose while transformContext prepares a request: the model is not called", async () => {
		const scenario = twoTextReplies([{ at: 4, command: "dispose" }], { steeringMode: "one-at-a-time", followUpMode: "one-at-a-time", before: ["none"], after: ["keep"], slowListenerMs: 0, prepareMs: 1 });
		expect(await runScenario("parallel", scenario)).toEqual([]);
	});
	it("parallel: abort while convertToLlm prepares a compaction summary for the model: the summary request is not sent", async () => {
		const scenario: Scenario = {
			replies: [
				{ blocks: ["tool"], stop: "auto" },
				{ blocks: ["text"], stop: "overflow" },
				{ blocks: ["text"], stop: "auto" },
			],
			tools: [{ latency: 0, fail: false, honoursAbort: false, hangs: false }],
			schedule: [{ at: 27, command: "abort" }],
			options: { steeringMode: "one-at-a-time", followUpMode: "one-at-a-time", before: ["none"], after: ["none"], slowListenerMs: 0, prepareMs: 1, summarizer: "model" },
		};
		expect(await runScenario("parallel", scenario)).toEqual([]);
	});
	it("parallel: clearing the queues of an agent disposed during its run reaches no ended machine", async () => {
		// The clear went to the machine, already in its final state: XState dropped it with a warning
		// and the queues read back uncleared.
		const scenario = twoTextReplies([
			{ at: 0, command: "dispose" },
			{ at: 0, command: "clear" },
		], { steeringMode: "one-at-a-time", followUpMode: "one-at-a-time", before: ["allow"], after: ["keep"], slowListenerMs: 3, prepareMs: 0, summarizer: "hook" });
		expect(await runScenario("parallel", scenario)).toEqual([]);
	});
	it("parallel: a steer, then dispose and clearAllQueues() from a listener: the clear is not undone", async () => {
		// Clearing took the ended machine's queues back after emptying the agent's, and so put the
		// steer back.
		const scenario = twoTextReplies([
			{ at: 5, command: "dispose" },
			{ at: 4, command: "steer" },
			{ at: 5, command: "clear" },
		], { steeringMode: "one-at-a-time", followUpMode: "one-at-a-time", before: ["none"], after: ["none"], slowListenerMs: 0, prepareMs: 0, summarizer: "hook" });
		expect(await runScenario("parallel", scenario)).toEqual([]);
	});
	it("parallel: dispose while transformContext prepares a request, a steer at the same point: the steer is refused", async () => {
		// The scenario counted the agent as disposed only once dispose() returned, but dispose()
		// delivers the closing events at once, and the listener issued the steer from inside it.
		const scenario = twoTextReplies([
			{ at: 5, command: "dispose" },
			{ at: 5, command: "steer" },
		], { steeringMode: "one-at-a-time", followUpMode: "one-at-a-time", before: ["none"], after: ["keep"], slowListenerMs: 0, prepareMs: 2, summarizer: "hook" });
		expect(await runScenario("parallel", scenario)).toEqual([]);
	});
	it("parallel: dispose, then the process stalls past toolAbortGraceMs while a slow listener still takes the run's last events: the run ends for the listeners before it settles", async () => {
		// On a loaded machine the grace timer fired first, the disposed run settled with agent_end
		// still queued, and the end-of-scenario checks found a run that never ended.
		const scenario = twoTextReplies([
			{ at: 3, command: "dispose" },
			{ at: 3, command: "stall" },
		], { steeringMode: "one-at-a-time", followUpMode: "one-at-a-time", before: ["none"], after: ["none"], slowListenerMs: 1, prepareMs: 0, summarizer: "hook" });
		expect(await runScenario("parallel", scenario)).toEqual([]);
	});
	it("streaming: a listener that throws aborts the run; the process stalls while afterToolCall decides: its late rewrite is dropped, as after abort()", async () => {
		// The run was aborted by the listener's failure, not by a command, so the scenario expected
		// the hook's rewrite in the transcript; under load the abort grace ran out first.
		const scenario: Scenario = {
			replies: [
				{ blocks: ["serialTool", "text"], stop: "auto", sameIds: true },
				{ blocks: ["text"], stop: "auto" },
				{ blocks: ["tool"], stop: "overflow", sameIds: true },
			],
			tools: [{ latency: 12, fail: false, honoursAbort: false, hangs: false }],
			schedule: [
				{ at: 30, command: "clear" },
				{ at: 32, command: "continue" },
				{ at: 13, command: "throw" },
				{ at: 14, command: "stall" },
			],
			options: { steeringMode: "one-at-a-time", followUpMode: "one-at-a-time", before: ["none"], after: ["slowRewrite", "terminate", "rewrite", "keep"], slowListenerMs: 0, prepareMs: 2, summarizer: "model" },
		};
		expect(await runScenario("streaming", scenario)).toEqual([]);
	});
});
