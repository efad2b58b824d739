/**
 * Scenarios for steers and follow-ups queued at the moments the coding agent's RPC mode allows
 * beyond the first sets: while idle, while the session waits to retry, while it compacts after a
 * run, with the queue modes changed while a tool runs, and with an abort (while streaming, and
 * during a tool: documented fixes 1 and 3); and repeated aborts.
 */
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { errorBody, messageDelta, messageStart, messageStop, ping, textBlock } from "../providers/anthropic-server.js";
import { sse, textAnswer, toolAnswer, waitForFileCommand } from "./answers.js";
import { withAbortedQueue, withoutDoomedTurn } from "./fixes.js";
import type { JsonObject } from "./harness.js";
import type { Scenario } from "./observe.js";
import { ask, isType, nth, readState, requestsReceived, startRpc } from "./rpc-drive.js";

/** A steer and a follow-up sent while the agent is idle, then a prompt: the run takes them. */
export const rpcQueuedWhileIdle: Scenario = {
	name: "RPC mode: steer and follow_up while idle, then a prompt",
	mode: "rpc",
	requestCount: 2,
	responses: [textAnswer("msg_first", ["First ", "answer."]), textAnswer("msg_followed", ["Follow-up ", "answer."])],
	async drive(run) {
		const rpc = startRpc(run);
		await ask(rpc, { id: "s1", type: "steer", message: "Be brief" });
		await ask(rpc, { id: "f1", type: "follow_up", message: "Then summarize" });
		await readState(rpc);
		rpc.send({ id: "p1", type: "prompt", message: "Hello" });
		await nth(rpc, "agent_end", 1);
		await readState(rpc);
		return { exit: await rpc.close(), records: rpc.records };
	},
};

/**
 * A steer and a follow-up sent while the session waits to retry an overloaded answer (the wait
 * is long enough for both to be accepted first): the retry's `continue()` takes them.
 */
export const rpcQueuedDuringRetryWait: Scenario = {
	name: "RPC mode: steer and follow_up while waiting to retry",
	mode: "rpc",
	requestCount: 3,
	workspace: { settings: { retry: { enabled: true, maxRetries: 2, baseDelayMs: 1500, provider: { maxRetries: 0 } } } },
	responses: [
		{ kind: "error", status: 529, body: errorBody("overloaded_error", "Overloaded") },
		textAnswer("msg_retried", ["Retried ", "answer."]),
		textAnswer("msg_followed", ["Follow-up ", "answer."]),
	],
	async drive(run) {
		const rpc = startRpc(run);
		rpc.send({ id: "p1", type: "prompt", message: "Say hello" });
		await rpc.waitFor(isType("auto_retry_start"));
		await ask(rpc, { id: "s1", type: "steer", message: "In French" });
		await ask(rpc, { id: "f1", type: "follow_up", message: "Then in German" });
		await ask(rpc, { id: "g1", type: "get_state" });
		await rpc.waitFor(isType("auto_retry_end"));
		await nth(rpc, "agent_end", 2);
		await readState(rpc);
		return { exit: await rpc.close(), records: rpc.records };
	},
};

/** The queued messages of `queuedDuringThresholdCompaction`: RPC command type and text. */
type Queued = Array<{ type: "steer" | "follow_up"; message: string }>;

/**
 * Messages queued while the session compacts after a run (its context is past the threshold;
 * the summary answer is held until they are accepted): the session then calls `continue()` with
 * the transcript ending in an assistant message, which runs the queued messages (a steer first,
 * else the follow-ups, one at a time).
 */
function queuedDuringThresholdCompaction(name: string, queued: Queued): Scenario {
	const answers = queued.map((_, i) => textAnswer(`msg_queued_${i + 1}`, ["Queued ", `answer ${i + 1}.`]));
	return {
		name: `RPC mode: ${name} during threshold compaction`,
		mode: "rpc",
		requestCount: 3 + queued.length,
		// Keeps the second exchange (about 8 estimated tokens), so the cut falls on its user message.
		workspace: { settings: { compaction: { enabled: true, keepRecentTokens: 6 } } },
		responses: [
			textAnswer("msg_first", ["First ", "answer."]),
			sse([messageStart("msg_big", { input_tokens: 190_000 }), ping(), ...textBlock(0, ["Second ", "answer."]), messageDelta("end_turn"), messageStop()]),
			// ping, message_start, ping, content_block_start, "## Goal\n" | held | the rest
			{ ...textAnswer("msg_summary", ["## Goal\n", "Answer questions."]), holdAfter: 5 },
			...answers,
		],
		async drive(run) {
			const rpc = startRpc(run);
			rpc.send({ id: "p1", type: "prompt", message: "First question" });
			await nth(rpc, "agent_end", 1);
			rpc.send({ id: "p2", type: "prompt", message: "Second question" });
			await rpc.waitFor(isType("compaction_start"));
			await requestsReceived(run, 3);
			for (const [i, { type, message }] of queued.entries()) await ask(rpc, { id: `q${i + 1}`, type, message });
			await ask(rpc, { id: "g1", type: "get_state" });
			run.server.release();
			await rpc.waitFor(isType("compaction_end"));
			await nth(rpc, "agent_end", 3);
			await readState(rpc);
			return { exit: await rpc.close(), records: rpc.records };
		},
	};
}

export const rpcSteerDuringThresholdCompaction = queuedDuringThresholdCompaction("steer and follow_up", [
	{ type: "steer", message: "Now be brief" },
	{ type: "follow_up", message: "Then summarize" },
]);

export const rpcFollowUpsDuringThresholdCompaction = queuedDuringThresholdCompaction("two follow-ups", [
	{ type: "follow_up", message: "Then summarize" },
	{ type: "follow_up", message: "Then translate" },
]);

/**
 * Two steers and two follow-ups queued while a tool runs in the default modes (one at a time),
 * then both modes set to `all` before the tool ends: the run drains each queue in the mode it has
 * when it drains.
 */
export const rpcQueueModeChangedDuringTool: Scenario = {
	name: "RPC mode: queue modes changed while a tool runs",
	mode: "rpc",
	requestCount: 3,
	responses: [
		toolAnswer("msg_tool", "Waiting.", [{ id: "toolu_wait", name: "bash", input: { command: waitForFileCommand("go") } }]),
		textAnswer("msg_steered", ["Steered ", "answer."]),
		textAnswer("msg_followed", ["Follow-up ", "answer."]),
	],
	async drive(run) {
		const rpc = startRpc(run);
		rpc.send({ id: "p1", type: "prompt", message: "Wait for the file" });
		await rpc.waitFor(isType("tool_execution_start"));
		await ask(rpc, { id: "s1", type: "steer", message: "First steer" });
		await ask(rpc, { id: "s2", type: "steer", message: "Second steer" });
		await ask(rpc, { id: "f1", type: "follow_up", message: "First follow-up" });
		await ask(rpc, { id: "f2", type: "follow_up", message: "Second follow-up" });
		await ask(rpc, { id: "m1", type: "set_steering_mode", mode: "all" });
		await ask(rpc, { id: "m2", type: "set_follow_up_mode", mode: "all" });
		await readState(rpc);
		await writeFile(join(run.ws.cwd, "go"), "");
		await nth(rpc, "agent_end", 1);
		await readState(rpc);
		return { exit: await rpc.close(), records: rpc.records };
	},
};

/** `abort` when idle, then two aborts sent back to back while a tool runs, then a prompt. */
export const rpcRepeatedAbort: Scenario = {
	name: "RPC mode: abort when idle, and twice during a tool",
	mode: "rpc",
	requestCount: 2,
	documentedFixes: [withoutDoomedTurn],
	responses: [
		toolAnswer("msg_tool", "Waiting.", [{ id: "toolu_wait", name: "bash", input: { command: waitForFileCommand("never") } }]),
		textAnswer("msg_after", ["After ", "the abort."]),
	],
	async drive(run) {
		const rpc = startRpc(run);
		await ask(rpc, { id: "a0", type: "abort" });
		await readState(rpc);
		rpc.send({ id: "p1", type: "prompt", message: "Wait for the file" });
		await rpc.waitFor(isType("tool_execution_start"));
		rpc.send({ id: "a1", type: "abort" });
		rpc.send({ id: "a2", type: "abort" });
		await rpc.waitForResponse("abort", 2);
		await nth(rpc, "agent_end", 1);
		await readState(rpc);
		rpc.send({ id: "p2", type: "prompt", message: "Are you there?" });
		await nth(rpc, "agent_end", 2);
		return { exit: await rpc.close(), records: rpc.records };
	},
};

/** An abort while the answer streams, with a steer queued: the steer waits for the next run in both. */
export const rpcAbortStreamingWithSteer: Scenario = {
	name: "RPC mode: abort while streaming with a steer queued",
	mode: "rpc",
	requestCount: 2,
	responses: [
		// ping, message_start, ping, content_block_start, "Partial " | held (until the end)
		{ ...textAnswer("msg_streaming", ["Partial ", "answer."]), holdAfter: 5 },
		textAnswer("msg_after", ["After ", "the abort."]),
	],
	async drive(run) {
		const rpc = startRpc(run);
		rpc.send({ id: "p1", type: "prompt", message: "Write a long essay" });
		await rpc.waitFor((record) => {
			const event = record["assistantMessageEvent"] as JsonObject | undefined;
			return record["type"] === "message_update" && event?.["type"] === "text_delta";
		});
		await ask(rpc, { id: "s1", type: "steer", message: "Shorter, please" });
		await ask(rpc, { id: "a1", type: "abort" });
		await nth(rpc, "agent_end", 1);
		await readState(rpc);
		rpc.send({ id: "p2", type: "prompt", message: "Are you there?" });
		await nth(rpc, "agent_end", 2);
		await readState(rpc);
		run.server.release();
		return { exit: await rpc.close(), records: rpc.records };
	},
};

/**
 * An abort while a tool runs, with two steers and a follow-up queued; then the queue is read and
 * another prompt runs. pi injects the steer into the doomed extra turn of the aborted run
 * (fixes 1 and 3 of docs/from-pi.md); agentchart keeps it queued for the next run.
 */
export const rpcAbortToolWithQueue: Scenario = {
	name: "RPC mode: abort during a tool with a steer and a follow-up queued",
	mode: "rpc",
	requestCount: 3,
	documentedFixes: [withAbortedQueue],
	responses: [
		toolAnswer("msg_tool", "Waiting.", [{ id: "toolu_wait", name: "bash", input: { command: waitForFileCommand("never") } }]),
		textAnswer("msg_after", ["After ", "the abort."]),
		textAnswer("msg_followed", ["Follow-up ", "answer."]),
	],
	async drive(run) {
		const rpc = startRpc(run);
		// "all": pi's doomed turn takes both steers, and agentchart's next run takes both at its start.
		// (In "one-at-a-time", pi's doomed turn takes one and agentchart's next run needs one more model
		// call for the second: not something pi's observation can be turned into.)
		await ask(rpc, { id: "m1", type: "set_steering_mode", mode: "all" });
		rpc.send({ id: "p1", type: "prompt", message: "Wait for the file" });
		await rpc.waitFor(isType("tool_execution_start"));
		await ask(rpc, { id: "s1", type: "steer", message: "Actually, be brief" });
		await ask(rpc, { id: "f1", type: "follow_up", message: "Then summarize" });
		await ask(rpc, { id: "s2", type: "steer", message: "And polite" });
		await ask(rpc, { id: "a1", type: "abort" });
		await nth(rpc, "agent_end", 1);
		await readState(rpc);
		rpc.send({ id: "p2", type: "prompt", message: "Are you there?" });
		await nth(rpc, "agent_end", 2);
		await readState(rpc);
		return { exit: await rpc.close(), records: rpc.records };
	},
};

export const QUEUE_SCENARIOS: readonly Scenario[] = [
	rpcQueuedWhileIdle,
	rpcQueuedDuringRetryWait,
	rpcSteerDuringThresholdCompaction,
	rpcFollowUpsDuringThresholdCompaction,
	rpcQueueModeChangedDuringTool,
	rpcRepeatedAbort,
	rpcAbortStreamingWithSteer,
	rpcAbortToolWithQueue,
];
