/**
 * What the Restate tests, demo and bench check of a finished session: a transcript a provider
 * accepts, and tools that did not run twice (from the workers' execution log).
 */
import { readFile } from "node:fs/promises";
import { checkTranscript } from "../../src/testing/transcript-checks.js";
import type { AgentMessage } from "../../src/types/messages.js";

/**
 * What is wrong with a transcript for a provider (empty when valid), by the testing kit's rule
 * (`checkTranscript`): every tool call of a reply that did not fail is answered by exactly one
 * tool result, in the call's order, before the next message; no tool result answers a call that
 * was not made; and the next request built from it is valid. A reply that failed or was aborted
 * may end with calls nobody answers (an abort while the model streamed keeps what had streamed):
 * providers leave such a reply out of the next request, and so does this check.
 *
 * @example
 * transcriptProblems(state.messages); // []
 */
export function transcriptProblems(messages: readonly AgentMessage[]): string[] {
	return checkTranscript(messages).map((found) => found.message);
}

/** One line of a worker's execution log (`EXEC_LOG`). */
export interface ExecutionRecord {
	sessionId: string;
	toolName: string;
	toolCallId: string;
	worker: string;
	phase: "start" | "end";
	at: number;
	/** On an `end`: whether the tool's signal was aborted when it returned (the `work` tool says). */
	aborted?: boolean;
}

/**
 * The execution log's records.
 *
 * @example
 * const records = await readExecutions("/tmp/exec.log");
 */
export async function readExecutions(file: string): Promise<ExecutionRecord[]> {
	const text = await readFile(file, "utf8").catch(() => "");
	return text
		.split("\n")
		.filter((line) => line.trim() !== "")
		.map((line) => JSON.parse(line) as ExecutionRecord);
}

/**
 * The worker that started `toolName` for the session, once the execution log says so: the tool
 * is running. A `tool_execution_start` event comes before that (the call's intent is journaled
 * first), so a test that kills or aborts at that event may land before the tool runs, where the
 * right answer is an interrupted call. Rejects after `timeoutMs`.
 *
 * @example
 * const worker = await toolStarted("/tmp/exec.log", "s1", "work");
 */
export async function toolStarted(file: string, sessionId: string, toolName: string, timeoutMs = 60_000): Promise<string> {
	const deadline = Date.now() + timeoutMs;
	for (;;) {
		const started = (await readExecutions(file)).find((record) => record.sessionId === sessionId && record.toolName === toolName && record.phase === "start");
		if (started) return started.worker;
		if (Date.now() > deadline) throw new Error(`${toolName} did not start for ${sessionId} within ${timeoutMs} ms (execution log ${file})`);
		await new Promise((resolve) => setTimeout(resolve, 10));
	}
}

/**
 * How many times each tool call started, by `session tool call`.
 *
 * @example
 * executionCounts(records).get("s1 work t0_0"); // 1
 */
export function executionCounts(records: readonly ExecutionRecord[]): Map<string, number> {
	const counts = new Map<string, number>();
	for (const record of records) {
		if (record.phase !== "start") continue;
		const key = `${record.sessionId} ${record.toolName} ${record.toolCallId}`;
		counts.set(key, (counts.get(key) ?? 0) + 1);
	}
	return counts;
}

/**
 * A raw call of an object's handler through Restate's ingress, `body` as it is sent (undefined:
 * none), bounded by `timeoutMs` (a retried call never answers). `message` is the error's message
 * when the answer is Restate's JSON error, else the answer's text.
 *
 * @example
 * const answer = await ingressCall(cluster.ingressUrl, "AgentSession", "user-42", "prompt", "null"); // { status: 400, message: "agentchart/restate: prompt refused its input: ..." }
 */
export async function ingressCall(ingressUrl: string, service: string, key: string, handler: string, body: string | undefined, timeoutMs = 15_000): Promise<{ status: number; message: string }> {
	const response = await fetch(`${ingressUrl}/${service}/${encodeURIComponent(key)}/${handler}`, {
		method: "POST",
		headers: { "content-type": "application/json" },
		body: body ?? "",
		signal: AbortSignal.timeout(timeoutMs),
	});
	const text = await response.text();
	let message = text;
	try {
		message = (JSON.parse(text) as { message?: string }).message ?? text;
	} catch {
		// Not JSON: the text is the message.
	}
	return { status: response.status, message };
}
