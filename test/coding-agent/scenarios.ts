/**
 * The integration scenarios: each scripts the model's answers, drives pi's coding agent CLI in
 * one mode, and observes what a user of that mode sees: stdout, the JSON records, the session
 * file, the request bodies the model received.
 *
 * A scenario runs once per engine with identical scripts, and the tests compare the two. What
 * waits on the agent waits for a record or a file, never for a fixed time; the slow tool is a
 * bounded shell loop that ends when the test creates a file.
 */
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { blockDelta, blockStart, messageDelta, messageStart, messageStop, textBlock, toolUseBlock } from "../providers/anthropic-server.js";
import { burst, PROMPT_TOO_LONG, sse, textAnswer, toolAnswer, waitForFileCommand } from "./answers.js";
import { withoutDoomedTurn } from "./fixes.js";
import { type CliExit, type JsonObject, RpcClient, type RunContext, startCli } from "./harness.js";
import type { Observation, Scenario } from "./observe.js";

/** Hard limit for one CLI process. */
const PROCESS_TIMEOUT_MS = 30_000;

// ---------------------------------------------------------------------------------------
// Drivers

async function runPrint(run: RunContext, args: string[]): Promise<{ exit: CliExit }> {
	return { exit: await startCli(run.engine, run.ws, args, PROCESS_TIMEOUT_MS).exited };
}

function startRpc(run: RunContext): RpcClient {
	return new RpcClient(startCli(run.engine, run.ws, ["--mode", "rpc"], PROCESS_TIMEOUT_MS));
}

const isType = (type: string) => (record: JsonObject) => record["type"] === type;

/** Resolves when the n-th (from 1) record of `type` has arrived. */
function nth(rpc: RpcClient, type: string, n: number): Promise<JsonObject> {
	let count = 0;
	return rpc.waitFor((record) => record["type"] === type && ++count === n);
}

function isTextDelta(delta: string) {
	return (record: JsonObject): boolean => {
		if (record["type"] !== "message_update") return false;
		const event = record["assistantMessageEvent"];
		return typeof event === "object" && event !== null && !Array.isArray(event) && event["type"] === "text_delta" && event["delta"] === delta;
	};
}

// ---------------------------------------------------------------------------------------
// The scenarios

export const printPlain: Scenario = {
	name: "print mode: plain answer",
	mode: "print",
	requestCount: 1,
	responses: [textAnswer("msg_plain", ["Hello ", "from the ", "model."])],
	drive: (run) => runPrint(run, ["-p", "Say hello"]),
};

export const jsonPlain: Scenario = {
	name: "JSON mode: plain answer",
	mode: "json",
	requestCount: 1,
	responses: [textAnswer("msg_plain", ["Hello ", "from the ", "model."])],
	drive: (run) => runPrint(run, ["--mode", "json", "-p", "Say hello"]),
};

export const jsonParallelTools: Scenario = {
	name: "JSON mode: parallel tool calls",
	mode: "json",
	requestCount: 2,
	workspace: { files: { "notes.txt": "alpha\nbeta\n", "todo.md": "# Todo\n- ship\n" } },
	responses: [
		toolAnswer("msg_tools", "Let me look.", [
			{ id: "toolu_read", name: "read", input: { path: "notes.txt" } },
			{ id: "toolu_ls", name: "ls", input: { path: "." } },
			// bash ends last (read and ls race each other's file system calls, not a 0.5 s sleep)
			// and writes one line (two lines may reach the agent as one chunk or two).
			{ id: "toolu_bash", name: "bash", input: { command: "sleep 0.5; echo one two" } },
		]),
		textAnswer("msg_done", ["Two files: ", "notes.txt and todo.md."]),
	],
	drive: (run) => runPrint(run, ["--mode", "json", "-p", "What is in this directory?"]),
};

export const jsonToolError: Scenario = {
	name: "JSON mode: tool errors",
	mode: "json",
	requestCount: 2,
	responses: [
		toolAnswer("msg_tools", "Reading.", [
			{ id: "toolu_missing", name: "read", input: { path: "missing.txt" } },
			{ id: "toolu_fail", name: "bash", input: { command: "sleep 0.5; echo failing >&2; exit 3" } },
		]),
		textAnswer("msg_done", ["The file ", "does not exist."]),
	],
	drive: (run) => runPrint(run, ["--mode", "json", "-p", "Read missing.txt"]),
};

/**
 * The whole answer arrives in one network chunk, so the agent handles its SSE events back to
 * back, without a macrotask in between: what each `message_update` snapshot contains then
 * depends on how many microtasks each engine takes per event.
 */
export const jsonOneChunk: Scenario = {
	name: "JSON mode: answer in one network chunk",
	mode: "json",
	burst: true,
	requestCount: 2,
	workspace: { files: { "notes.txt": "alpha\nbeta\n" } },
	responses: [
		sse([
			burst([
				messageStart("msg_tools"),
				...textBlock(0, ["Let me ", "look."]),
				...toolUseBlock(1, "toolu_read", "read", ['{"path":', '"notes.txt"}']),
				messageDelta("tool_use", { output_tokens: 40 }),
				messageStop(),
			]),
		]),
		sse([burst([messageStart("msg_done"), ...textBlock(0, ["Two ", "lines."]), messageDelta("end_turn"), messageStop()])]),
	],
	drive: (run) => runPrint(run, ["--mode", "json", "-p", "Read notes.txt"]),
};

/** Whether a session entry or record carries an assistant message that ended in an error. */
function hasErrorMessage(value: JsonObject): boolean {
	const message = value["message"];
	return typeof message === "object" && message !== null && !Array.isArray(message) && message["stopReason"] === "error";
}

/**
 * Cuts an observation after its first record of type `recordType`, its first `requests`
 * requests, and each session file after its first entry with an error message.
 */
function upTo(recordType: string, requests: number) {
	return (observation: Observation): Observation => {
		const cut = <T>(items: T[], index: number): T[] => (index === -1 ? items : items.slice(0, index + 1));
		return {
			...observation,
			records: cut(observation.records, observation.records.findIndex((record) => record["type"] === recordType)),
			requests: observation.requests.slice(0, requests),
			sessions: observation.sessions.map((entries) => cut(entries, entries.findIndex(hasErrorMessage))),
		};
	};
}

export const jsonOverflow: Scenario = {
	name: "JSON mode: context overflow",
	mode: "json",
	requestCount: 2,
	workspace: { settings: { compaction: { enabled: true, keepRecentTokens: 1 } } },
	responses: [
		textAnswer("msg_first", ["First ", "answer."]),
		PROMPT_TOO_LONG,
		textAnswer("msg_summary", ["## Goal\n", "Answer questions."]),
		textAnswer("msg_retry", ["Second ", "answer."]),
	],
	// Print mode returns as soon as the last prompt() resolves, while pi's session is still
	// handling the overflow: how far its compaction and retry get before the process ends is a
	// race in pi itself. What is printed up to compaction_start, the first two requests and the
	// session up to the error are not.
	comparedPart: upTo("compaction_start", 2),
	drive: (run) => runPrint(run, ["--mode", "json", "-p", "First question", "Second question"]),
};

export const rpcAbortStreaming: Scenario = {
	name: "RPC mode: abort while streaming",
	mode: "rpc",
	requestCount: 2,
	responses: [
		// The answer stops mid-text and the connection hangs until the client aborts.
		sse(
			[
				messageStart("msg_stalled"),
				blockStart(0, { type: "text", text: "" }),
				blockDelta(0, { type: "text_delta", text: "Partial " }),
				blockDelta(0, { type: "text_delta", text: "answer" }),
			],
			"stall",
		),
		textAnswer("msg_after", ["After ", "the abort."]),
	],
	async drive(run) {
		const rpc = startRpc(run);
		rpc.send({ id: "p1", type: "prompt", message: "Write a long essay" });
		await rpc.waitFor(isTextDelta("answer"));
		rpc.send({ id: "a1", type: "abort" });
		await rpc.waitForResponse("abort");
		await nth(rpc, "agent_end", 1);
		rpc.send({ id: "p2", type: "prompt", message: "Are you there?" });
		await nth(rpc, "agent_end", 2);
		return { exit: await rpc.close(), records: rpc.records };
	},
};

export const rpcAbortTool: Scenario = {
	name: "RPC mode: abort during a tool",
	mode: "rpc",
	requestCount: 2,
	documentedFixes: [withoutDoomedTurn],
	responses: [
		toolAnswer("msg_tool", "Waiting.", [{ id: "toolu_wait", name: "bash", input: { command: waitForFileCommand("never") } }]),
		textAnswer("msg_after", ["After ", "the abort."]),
	],
	async drive(run) {
		const rpc = startRpc(run);
		rpc.send({ id: "p1", type: "prompt", message: "Wait for the file" });
		await rpc.waitFor(isType("tool_execution_start"));
		rpc.send({ id: "a1", type: "abort" });
		await rpc.waitForResponse("abort");
		await nth(rpc, "agent_end", 1);
		rpc.send({ id: "p2", type: "prompt", message: "Are you there?" });
		await nth(rpc, "agent_end", 2);
		return { exit: await rpc.close(), records: rpc.records };
	},
};

export const rpcSteerFollowUp: Scenario = {
	name: "RPC mode: steer and follow-up during a tool",
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
		rpc.send({ id: "s1", type: "steer", message: "Actually, be brief" });
		await rpc.waitForResponse("steer");
		rpc.send({ id: "f1", type: "follow_up", message: "Then summarize" });
		await rpc.waitForResponse("follow_up");
		await writeFile(join(run.ws.cwd, "go"), "");
		await nth(rpc, "agent_end", 1);
		return { exit: await rpc.close(), records: rpc.records };
	},
};

export const rpcOverflow: Scenario = {
	name: "RPC mode: overflow, compaction and retry",
	mode: "rpc",
	requestCount: 4,
	// Keep only the newest message: the first exchange is summarized.
	workspace: { settings: { compaction: { enabled: true, keepRecentTokens: 1 } } },
	responses: [
		textAnswer("msg_first", ["First ", "answer."]),
		PROMPT_TOO_LONG,
		textAnswer("msg_summary", ["## Goal\n", "Answer questions."]),
		textAnswer("msg_retry", ["Second ", "answer."]),
	],
	async drive(run) {
		const rpc = startRpc(run);
		rpc.send({ id: "p1", type: "prompt", message: "First question" });
		await nth(rpc, "agent_end", 1);
		rpc.send({ id: "p2", type: "prompt", message: "Second question" });
		await rpc.waitFor(isType("compaction_end"));
		await nth(rpc, "agent_end", 3);
		return { exit: await rpc.close(), records: rpc.records };
	},
};

export const rpcManualCompaction: Scenario = {
	name: "RPC mode: manual compaction",
	mode: "rpc",
	requestCount: 4,
	// Keeps the second exchange (about 8 estimated tokens), so the cut falls on its user message:
	// one summary request. (A cut inside a turn would send two summary requests in parallel.)
	workspace: { settings: { compaction: { enabled: true, keepRecentTokens: 6 } } },
	responses: [
		textAnswer("msg_first", ["First ", "answer."]),
		textAnswer("msg_second", ["Second ", "answer."]),
		textAnswer("msg_summary", ["## Goal\n", "Answer questions."]),
		textAnswer("msg_third", ["Third ", "answer."]),
	],
	async drive(run) {
		const rpc = startRpc(run);
		rpc.send({ id: "p1", type: "prompt", message: "First question" });
		await nth(rpc, "agent_end", 1);
		rpc.send({ id: "p2", type: "prompt", message: "Second question" });
		await nth(rpc, "agent_end", 2);
		rpc.send({ id: "c1", type: "compact" });
		await rpc.waitForResponse("compact");
		rpc.send({ id: "p3", type: "prompt", message: "Third question" });
		await nth(rpc, "agent_end", 3);
		return { exit: await rpc.close(), records: rpc.records };
	},
};

export const SCENARIOS: readonly Scenario[] = [
	printPlain,
	jsonPlain,
	jsonParallelTools,
	jsonToolError,
	jsonOneChunk,
	jsonOverflow,
	rpcAbortStreaming,
	rpcAbortTool,
	rpcSteerFollowUp,
	rpcOverflow,
	rpcManualCompaction,
];
