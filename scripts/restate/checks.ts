/**
 * What the Restate tests, demo and bench check of a finished session: a transcript a provider
 * accepts, and tools that did not run twice (from the workers' execution log).
 */
import { readFile } from "node:fs/promises";
import type { AgentMessage } from "../../src/types/messages.js";

/**
 * What is wrong with a transcript for a provider (empty when valid): every tool call of an
 * assistant message is answered by exactly one tool result, in the call's order, before the next
 * assistant message; no tool result answers a call that was not made.
 *
 * @example
 * transcriptProblems(state.messages); // []
 */
export function transcriptProblems(messages: readonly AgentMessage[]): string[] {
	const problems: string[] = [];
	let open: string[] = [];
	const answered = new Set<string>();
	messages.forEach((message, index) => {
		if (message.role === "assistant") {
			if (open.length > 0) problems.push(`message ${index}: assistant message while calls ${open.join(", ")} are unanswered`);
			open = message.content.filter((block) => block.type === "toolCall").map((block) => (block as { id: string }).id);
			return;
		}
		if (message.role === "toolResult") {
			const expected = open.shift();
			if (expected === undefined) problems.push(`message ${index}: result for ${message.toolCallId} answers no open call`);
			else if (expected !== message.toolCallId) problems.push(`message ${index}: result for ${message.toolCallId}, expected ${expected}`);
			const key = `${index}:${message.toolCallId}`;
			if (answered.has(key)) problems.push(`message ${index}: ${message.toolCallId} answered twice`);
			answered.add(key);
			return;
		}
		if (open.length > 0) problems.push(`message ${index}: ${message.role} message while calls ${open.join(", ")} are unanswered`);
	});
	if (open.length > 0) problems.push(`the transcript ends with calls ${open.join(", ")} unanswered`);
	return problems;
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
