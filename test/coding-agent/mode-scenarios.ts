/**
 * More scenarios, for the coding agent's modes and features beyond the first set: the queue
 * modes over RPC, continuing and forking a saved session, auto-retry after an overloaded
 * provider, thinking levels, images in prompts and tool results, streamed bash output, and tool
 * calls the agent refuses.
 */
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import {
	blockDelta,
	blockStart,
	errorBody,
	messageDelta,
	messageStart,
	messageStop,
	ping,
	streamError,
	textBlock,
	thinkingBlock,
	toolUseBlock,
} from "../providers/anthropic-server.js";
import { PROMPT_TOO_LONG, sse, textAnswer, toolAnswer, waitForFileCommand } from "./answers.js";
import { withMissingPropertyAtRoot } from "./fixes.js";
import { type CliExit, type JsonObject, RpcClient, type RunContext, startCli } from "./harness.js";
import type { Scenario } from "./observe.js";

/** Hard limit for one CLI process. */
const PROCESS_TIMEOUT_MS = 30_000;

/** A 1×1 PNG. */
const PNG_BASE64 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

function runPrint(run: RunContext, args: string[]): Promise<CliExit> {
	return startCli(run.engine, run.ws, args, PROCESS_TIMEOUT_MS).exited;
}

function startRpc(run: RunContext, args: string[] = []): RpcClient {
	return new RpcClient(startCli(run.engine, run.ws, ["--mode", "rpc", ...args], PROCESS_TIMEOUT_MS));
}

const isType = (type: string) => (record: JsonObject) => record["type"] === type;

/** Resolves when the n-th (from 1) record of `type` has arrived. */
function nth(rpc: RpcClient, type: string, n: number): Promise<JsonObject> {
	let count = 0;
	return rpc.waitFor((record) => record["type"] === type && ++count === n);
}

/** The JSON lines of several print-mode runs, one after the other. */
function joinedExits(exits: CliExit[]): CliExit {
	const last = exits[exits.length - 1] as CliExit;
	return { ...last, stdout: exits.map((exit) => exit.stdout).join(""), stderr: exits.map((exit) => exit.stderr).join("") };
}

/** Two steers and two follow-ups queued while a tool runs, in the given queue modes. */
function queueModes(mode: "all" | "one-at-a-time", requestCount: number): Scenario {
	const answers = Array.from({ length: requestCount - 1 }, (_, i) => textAnswer(`msg_${i + 1}`, [`Answer `, `${i + 1}.`]));
	return {
		name: `RPC mode: steering and follow-up mode ${mode}`,
		mode: "rpc",
		requestCount,
		responses: [toolAnswer("msg_tool", "Waiting.", [{ id: "toolu_wait", name: "bash", input: { command: waitForFileCommand("go") } }]), ...answers],
		async drive(run) {
			const rpc = startRpc(run);
			rpc.send({ id: "m1", type: "set_steering_mode", mode });
			await rpc.waitForResponse("set_steering_mode");
			rpc.send({ id: "m2", type: "set_follow_up_mode", mode });
			await rpc.waitForResponse("set_follow_up_mode");
			rpc.send({ id: "p1", type: "prompt", message: "Wait for the file" });
			await rpc.waitFor(isType("tool_execution_start"));
			rpc.send({ id: "s1", type: "steer", message: "First steer" });
			await rpc.waitForResponse("steer", 0);
			rpc.send({ id: "s2", type: "steer", message: "Second steer" });
			await rpc.waitForResponse("steer", 1);
			rpc.send({ id: "f1", type: "follow_up", message: "First follow-up" });
			await rpc.waitForResponse("follow_up", 0);
			rpc.send({ id: "f2", type: "follow_up", message: "Second follow-up" });
			await rpc.waitForResponse("follow_up", 1);
			await writeFile(join(run.ws.cwd, "go"), "");
			await nth(rpc, "agent_end", 1);
			rpc.send({ id: "g1", type: "get_state" });
			await rpc.waitForResponse("get_state");
			return { exit: await rpc.close(), records: rpc.records };
		},
	};
}

export const rpcQueueModesAll = queueModes("all", 3);
export const rpcQueueModesOneAtATime = queueModes("one-at-a-time", 5);

/** Prompt, then `--continue` the saved session in a second process. */
export const jsonContinueSession: Scenario = {
	name: "JSON mode: continue a saved session",
	mode: "json",
	requestCount: 2,
	responses: [textAnswer("msg_first", ["First ", "answer."]), textAnswer("msg_second", ["Second ", "answer."])],
	async drive(run) {
		const first = await runPrint(run, ["--mode", "json", "-p", "First question"]);
		const second = await runPrint(run, ["--mode", "json", "--continue", "-p", "Second question"]);
		return { exit: joinedExits([first, second]) };
	},
};

/** Two exchanges, then fork at the second user message and ask again on the branch. */
export const rpcForkSession: Scenario = {
	name: "RPC mode: fork a session and continue on the branch",
	mode: "rpc",
	requestCount: 3,
	responses: [
		textAnswer("msg_first", ["First ", "answer."]),
		textAnswer("msg_second", ["Second ", "answer."]),
		textAnswer("msg_branch", ["Branch ", "answer."]),
	],
	async drive(run) {
		const rpc = startRpc(run);
		rpc.send({ id: "p1", type: "prompt", message: "First question" });
		await nth(rpc, "agent_end", 1);
		rpc.send({ id: "p2", type: "prompt", message: "Second question" });
		await nth(rpc, "agent_end", 2);
		rpc.send({ id: "g1", type: "get_fork_messages" });
		const forkable = await rpc.waitForResponse("get_fork_messages");
		const data = forkable["data"] as { messages: Array<{ entryId: string }> };
		const second = data.messages[1];
		if (!second) throw new Error(`no second user message to fork at: ${JSON.stringify(forkable)}`);
		rpc.send({ id: "k1", type: "fork", entryId: second.entryId });
		await rpc.waitForResponse("fork");
		rpc.send({ id: "p3", type: "prompt", message: "Another second question" });
		await nth(rpc, "agent_end", 3);
		rpc.send({ id: "m1", type: "get_messages" });
		await rpc.waitForResponse("get_messages");
		return { exit: await rpc.close(), records: rpc.records };
	},
};

const OVERLOADED = { kind: "error", status: 529, body: errorBody("overloaded_error", "Overloaded") } as const;
const RATE_LIMITED = { kind: "error", status: 429, body: errorBody("rate_limit_error", "Number of requests has exceeded your rate limit") } as const;

/** Fast retries by the session, none by the SDK (so every attempt is one request here). */
const QUICK_RETRY = { retry: { enabled: true, maxRetries: 2, baseDelayMs: 5, provider: { maxRetries: 0 } } };

export const jsonAutoRetry: Scenario = {
	name: "JSON mode: auto-retry after overloaded and rate-limited answers",
	mode: "json",
	requestCount: 3,
	workspace: { settings: QUICK_RETRY },
	responses: [OVERLOADED, RATE_LIMITED, textAnswer("msg_ok", ["Recovered ", "answer."])],
	async drive(run) {
		return { exit: await runPrint(run, ["--mode", "json", "-p", "Say hello"]) };
	},
};

export const jsonRetryExhausted: Scenario = {
	name: "JSON mode: auto-retry gives up",
	mode: "json",
	requestCount: 3,
	workspace: { settings: QUICK_RETRY },
	responses: [OVERLOADED, OVERLOADED, OVERLOADED],
	async drive(run) {
		return { exit: await runPrint(run, ["--mode", "json", "-p", "Say hello"]) };
	},
};

/**
 * Auto-retry in the middle of a run: a tool call, then an answer that breaks off with an
 * `overloaded_error` event after some text; the session drops the error message and continues
 * from the tool result.
 */
export const jsonRetryAfterTool: Scenario = {
	name: "JSON mode: auto-retry after a stream error in the middle of a run",
	mode: "json",
	requestCount: 3,
	workspace: { settings: QUICK_RETRY, files: { "notes.txt": "alpha\n" } },
	responses: [
		toolAnswer("msg_tool", "Reading.", [{ id: "toolu_read", name: "read", input: { path: "notes.txt" } }]),
		sse([messageStart("msg_broken"), ping(), blockStart(0, { type: "text", text: "" }), blockDelta(0, { type: "text_delta", text: "It says" }), streamError("overloaded_error", "Overloaded")]),
		textAnswer("msg_ok", ["It says ", "alpha."]),
	],
	drive: async (run) => ({ exit: await runPrint(run, ["--mode", "json", "-p", "Read notes.txt"]) }),
};

/**
 * A context overflow in the middle of a run (the request after a tool result), compacted, then
 * retried: the retry continues from the tool result.
 */
export const rpcOverflowAfterTool: Scenario = {
	name: "RPC mode: overflow after a tool result, compaction and retry",
	mode: "rpc",
	requestCount: 5,
	// Keeps the whole second turn (about 16 estimated tokens): the cut falls on its user message,
	// so one summary request (a cut inside the turn sends two in parallel, in either order).
	workspace: { settings: { compaction: { enabled: true, keepRecentTokens: 20 } }, files: { "notes.txt": "alpha\n" } },
	responses: [
		textAnswer("msg_first", ["First ", "answer."]),
		toolAnswer("msg_tool", "Reading.", [{ id: "toolu_read", name: "read", input: { path: "notes.txt" } }]),
		PROMPT_TOO_LONG,
		textAnswer("msg_summary", ["## Goal\n", "Read notes."]),
		textAnswer("msg_retry", ["It says ", "alpha."]),
	],
	async drive(run) {
		const rpc = startRpc(run);
		rpc.send({ id: "p1", type: "prompt", message: "First question" });
		await nth(rpc, "agent_end", 1);
		rpc.send({ id: "p2", type: "prompt", message: "Read notes.txt" });
		await rpc.waitFor(isType("compaction_end"));
		await nth(rpc, "agent_end", 3);
		return { exit: await rpc.close(), records: rpc.records };
	},
};

/** A thinking model at a high level: thinking, a tool call, then the answer (the thinking replayed). */
export const jsonThinking: Scenario = {
	name: "JSON mode: thinking level high",
	mode: "json",
	requestCount: 2,
	workspace: { model: { reasoning: true }, files: { "notes.txt": "alpha\n" } },
	responses: [
		sse([
			messageStart("msg_think"),
			ping(),
			...thinkingBlock(0, ["The user wants ", "the notes."], "sig_think_1"),
			...textBlock(1, ["Reading."]),
			...toolUseBlock(2, "toolu_read", "read", ['{"path":', '"notes.txt"}']),
			messageDelta("tool_use", { output_tokens: 60 }),
			messageStop(),
		]),
		sse([messageStart("msg_done"), ping(), ...thinkingBlock(0, ["Done."], "sig_think_2"), ...textBlock(1, ["It says ", "alpha."]), messageDelta("end_turn"), messageStop()]),
	],
	drive: async (run) => ({ exit: await runPrint(run, ["--mode", "json", "--thinking", "high", "-p", "Read notes.txt"]) }),
};

/** An image in an RPC prompt, and a tool result that is an image. */
export const rpcImages: Scenario = {
	name: "RPC mode: images in a prompt and in a tool result",
	mode: "rpc",
	requestCount: 2,
	workspace: { model: { input: ["text", "image"] } },
	responses: [
		toolAnswer("msg_tool", "Looking.", [{ id: "toolu_img", name: "read", input: { path: "dot.png" } }]),
		textAnswer("msg_done", ["Two ", "dots."]),
	],
	async drive(run) {
		await writeFile(join(run.ws.cwd, "dot.png"), Buffer.from(PNG_BASE64, "base64"));
		const rpc = startRpc(run);
		rpc.send({ id: "p1", type: "prompt", message: "Compare with dot.png", images: [{ type: "image", data: PNG_BASE64, mimeType: "image/png" }] });
		await nth(rpc, "agent_end", 1);
		return { exit: await rpc.close(), records: rpc.records };
	},
};

/** bash output arriving in three pieces, each far apart: three tool_execution_update records. */
export const jsonBashStreaming: Scenario = {
	name: "JSON mode: bash output streams as tool_execution_update",
	mode: "json",
	requestCount: 2,
	responses: [
		toolAnswer("msg_tool", "Running.", [{ id: "toolu_bash", name: "bash", input: { command: "echo one; sleep 0.4; echo two; sleep 0.4; echo three" } }]),
		textAnswer("msg_done", ["Three ", "lines."]),
	],
	drive: async (run) => ({ exit: await runPrint(run, ["--mode", "json", "-p", "Count"]) }),
};

/** A call of a tool that does not exist, and one whose arguments fail validation. */
export const jsonRefusedToolCalls: Scenario = {
	name: "JSON mode: unknown tool and invalid arguments",
	mode: "json",
	requestCount: 2,
	documentedFixes: [withMissingPropertyAtRoot],
	responses: [
		toolAnswer("msg_tools", "Trying.", [
			{ id: "toolu_unknown", name: "write_file", input: { path: "x.txt", content: "x" } },
			{ id: "toolu_invalid", name: "read", input: { file: "notes.txt" } },
		]),
		textAnswer("msg_done", ["Both ", "failed."]),
	],
	drive: async (run) => ({ exit: await runPrint(run, ["--mode", "json", "-p", "Write x.txt"]) }),
};

/** Abort while the session waits to retry an overloaded answer. */
export const rpcAbortDuringRetry: Scenario = {
	name: "RPC mode: abort while waiting to retry",
	mode: "rpc",
	requestCount: 2,
	workspace: { settings: { retry: { enabled: true, maxRetries: 2, baseDelayMs: 20_000, provider: { maxRetries: 0 } } } },
	responses: [OVERLOADED, textAnswer("msg_after", ["After ", "the abort."])],
	async drive(run) {
		const rpc = startRpc(run);
		rpc.send({ id: "p1", type: "prompt", message: "Say hello" });
		await rpc.waitFor(isType("auto_retry_start"));
		rpc.send({ id: "a1", type: "abort" });
		await rpc.waitForResponse("abort");
		await rpc.waitFor(isType("auto_retry_end"));
		rpc.send({ id: "p2", type: "prompt", message: "Are you there?" });
		await nth(rpc, "agent_end", 2);
		return { exit: await rpc.close(), records: rpc.records };
	},
};

function isDelta(type: string, text: string) {
	return (record: JsonObject): boolean => {
		if (record["type"] !== "message_update") return false;
		const event = record["assistantMessageEvent"] as JsonObject | undefined;
		return event?.["type"] === type && event["delta"] === text;
	};
}

/**
 * A steer and a prompt with `streamingBehavior: "followUp"` sent while the answer streams (the
 * server holds the stream after its first text delta until both are accepted).
 */
export const rpcSteerWhileStreaming: Scenario = {
	name: "RPC mode: steer and queued prompt while streaming",
	mode: "rpc",
	requestCount: 3,
	responses: [
		// ping, message_start, ping, content_block_start, "Partial " | held | the rest
		{ ...textAnswer("msg_streaming", ["Partial ", "answer."]), holdAfter: 5 },
		textAnswer("msg_steered", ["Steered ", "answer."]),
		textAnswer("msg_followed", ["Follow-up ", "answer."]),
	],
	async drive(run) {
		const rpc = startRpc(run);
		rpc.send({ id: "p1", type: "prompt", message: "Write a long essay" });
		await rpc.waitFor(isDelta("text_delta", "Partial "));
		rpc.send({ id: "s1", type: "steer", message: "Shorter, please" });
		await rpc.waitForResponse("steer");
		rpc.send({ id: "p2", type: "prompt", message: "Then a title", streamingBehavior: "followUp" });
		await rpc.waitForResponse("prompt", 1);
		run.server.release();
		await nth(rpc, "agent_end", 1);
		return { exit: await rpc.close(), records: rpc.records };
	},
};

/**
 * Thinking set over RPC, the run aborted in the middle of a thinking block (no signature yet),
 * then thinking off and another prompt: the aborted message, its unsigned thinking, is replayed.
 */
export const rpcAbortMidThinking: Scenario = {
	name: "RPC mode: abort in the middle of thinking",
	mode: "rpc",
	requestCount: 2,
	workspace: { model: { reasoning: true } },
	responses: [
		// ping, message_start, ping, content_block_start, "Hmm, " | held (until the end)
		{ ...sse([messageStart("msg_think"), ping(), ...thinkingBlock(0, ["Hmm, ", "let me see."], "sig_never"), ...textBlock(1, ["Late."]), messageDelta("end_turn"), messageStop()]), holdAfter: 5 },
		textAnswer("msg_after", ["After ", "the abort."]),
	],
	async drive(run) {
		const rpc = startRpc(run);
		rpc.send({ id: "t1", type: "set_thinking_level", level: "medium" });
		await rpc.waitForResponse("set_thinking_level");
		rpc.send({ id: "p1", type: "prompt", message: "Think hard" });
		await rpc.waitFor(isDelta("thinking_delta", "Hmm, "));
		rpc.send({ id: "a1", type: "abort" });
		await rpc.waitForResponse("abort");
		await nth(rpc, "agent_end", 1);
		rpc.send({ id: "t2", type: "set_thinking_level", level: "off" });
		await rpc.waitForResponse("set_thinking_level", 1);
		rpc.send({ id: "p2", type: "prompt", message: "Are you there?" });
		await nth(rpc, "agent_end", 2);
		run.server.release();
		return { exit: await rpc.close(), records: rpc.records };
	},
};

export const MODE_SCENARIOS: readonly Scenario[] = [
	rpcQueueModesAll,
	rpcQueueModesOneAtATime,
	jsonContinueSession,
	rpcForkSession,
	jsonAutoRetry,
	jsonRetryExhausted,
	jsonRetryAfterTool,
	rpcOverflowAfterTool,
	jsonThinking,
	rpcImages,
	jsonBashStreaming,
	jsonRefusedToolCalls,
	rpcAbortDuringRetry,
	rpcSteerWhileStreaming,
	rpcAbortMidThinking,
];
