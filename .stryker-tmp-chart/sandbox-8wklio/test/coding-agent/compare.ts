/**
 * Readable comparisons of two observations: one-line labels per record (as in
 * `reference/pi-mono.md` §1.6), a line diff of two label sequences, and the first record that
 * differs byte for byte.
 */
// @ts-nocheck

import type { Json, JsonObject } from "./harness.js";
import type { Observation } from "./observe.js";

function field(record: JsonObject, key: string): Json | undefined {
	return record[key];
}

function asObject(value: Json | undefined): JsonObject | undefined {
	return value !== null && typeof value === "object" && !Array.isArray(value) ? value : undefined;
}

function messageLabel(message: JsonObject | undefined): string {
	if (!message) return "?";
	const role = String(field(message, "role"));
	if (role === "assistant") {
		const error = field(message, "errorMessage");
		return `assistant(${String(field(message, "stopReason"))}${typeof error === "string" ? `:${error.slice(0, 40)}` : ""})`;
	}
	if (role === "toolResult") return `toolResult(${String(field(message, "toolCallId"))}${field(message, "isError") === true ? ",err" : ""})`;
	if (role === "user") {
		const content = field(message, "content");
		const first = Array.isArray(content) ? asObject(content[0]) : undefined;
		const text = typeof content === "string" ? content : first ? String(field(first, "text")) : "";
		return `user(${text.slice(0, 30)})`;
	}
	return role;
}

/**
 * A one-line label for a JSON-mode or RPC record.
 *
 * @example
 * label({ type: "message_end", message: { role: "assistant", stopReason: "stop" } }); // "message_end:assistant(stop)"
 */
export function label(record: JsonObject): string {
	const type = String(field(record, "type"));
	switch (type) {
		case "response":
			return `response:${String(field(record, "command"))}${field(record, "success") === false ? "(failed)" : ""}`;
		case "message_start":
		case "message_end":
			return `${type}:${messageLabel(asObject(field(record, "message")))}`;
		case "message_update":
			return `message_update:${String(field(asObject(field(record, "assistantMessageEvent")) ?? {}, "type"))}`;
		case "turn_end": {
			const results = field(record, "toolResults");
			return `turn_end(toolResults=${Array.isArray(results) ? results.length : "?"})`;
		}
		case "agent_end": {
			const messages = field(record, "messages");
			return `agent_end(messages=${Array.isArray(messages) ? messages.length : "?"})`;
		}
		case "tool_execution_start":
		case "tool_execution_update":
			return `${type}(${String(field(record, "toolCallId"))})`;
		case "tool_execution_end":
			return `${type}(${String(field(record, "toolCallId"))}${field(record, "isError") === true ? ",err" : ""})`;
		case "compaction_start":
			return `compaction_start(${String(field(record, "reason"))})`;
		case "compaction_end":
			return `compaction_end(${String(field(record, "reason"))},willRetry=${String(field(record, "willRetry"))})`;
		case "queue_update": {
			const steering = field(record, "steering");
			const followUp = field(record, "followUp");
			return `queue_update(steering=${Array.isArray(steering) ? steering.length : "?"},followUp=${Array.isArray(followUp) ? followUp.length : "?"})`;
		}
		default:
			return type;
	}
}

/** One step of an alignment: both lists have the item, or only one of them. */
export type AlignStep = { kind: "same"; expected: number; actual: number } | { kind: "removed"; expected: number } | { kind: "added"; actual: number };

/** Aligns two lists by their longest common subsequence. */
export function align(expected: readonly string[], actual: readonly string[]): AlignStep[] {
	const n = expected.length;
	const m = actual.length;
	const lcs: number[][] = Array.from({ length: n + 1 }, () => new Array<number>(m + 1).fill(0));
	for (let i = n - 1; i >= 0; i--) {
		for (let j = m - 1; j >= 0; j--) {
			const row = lcs[i] as number[];
			row[j] = expected[i] === actual[j] ? (lcs[i + 1]?.[j + 1] ?? 0) + 1 : Math.max(lcs[i + 1]?.[j] ?? 0, row[j + 1] ?? 0);
		}
	}
	const steps: AlignStep[] = [];
	let i = 0;
	let j = 0;
	while (i < n || j < m) {
		if (i < n && j < m && expected[i] === actual[j]) {
			steps.push({ kind: "same", expected: i++, actual: j++ });
		} else if (j < m && (i >= n || (lcs[i]?.[j + 1] ?? 0) >= (lcs[i + 1]?.[j] ?? 0))) {
			steps.push({ kind: "added", actual: j++ });
		} else {
			steps.push({ kind: "removed", expected: i++ });
		}
	}
	return steps;
}

/**
 * A unified-style diff of two label lists (`  ` same, `- ` only in `expected` (pi), `+ ` only in
 * `actual` (agentchart)).
 */
export function diffLines(expected: readonly string[], actual: readonly string[]): string[] {
	return align(expected, actual).map((step) =>
		step.kind === "same" ? `  ${expected[step.expected]}` : step.kind === "removed" ? `- ${expected[step.expected]}` : `+ ${actual[step.actual]}`,
	);
}

/** The index and both JSON texts of the first records that differ, or undefined if all match. */
export function firstDifference(
	expected: readonly JsonObject[],
	actual: readonly JsonObject[],
): { index: number; expected: string; actual: string } | undefined {
	const length = Math.max(expected.length, actual.length);
	for (let index = 0; index < length; index++) {
		const e = expected[index];
		const a = actual[index];
		const expectedText = e === undefined ? "(none)" : JSON.stringify(e);
		const actualText = a === undefined ? "(none)" : JSON.stringify(a);
		if (expectedText !== actualText) return { index, expected: expectedText, actual: actualText };
	}
	return undefined;
}

/** The same value with every object's keys sorted (to compare content apart from key order). */
export function sortKeys(value: Json): Json {
	if (Array.isArray(value)) return value.map(sortKeys);
	if (value !== null && typeof value === "object") {
		const out: JsonObject = {};
		for (const key of Object.keys(value).sort()) out[key] = sortKeys(value[key] as Json);
		return out;
	}
	return value;
}

/**
 * The paths at which two JSON values differ (`message.content[1]`: only in one of them, or
 * different leaves), at most `limit` of them.
 *
 * @example
 * valueDifferences({ a: 1, b: [1] }, { a: 2, b: [1, 2] }); // ["a: 1 ≠ 2", "b[1]: missing ≠ 2"]
 */
export function valueDifferences(expected: Json | undefined, actual: Json | undefined, path = "", limit = 6): string[] {
	const out: string[] = [];
	const visit = (e: Json | undefined, a: Json | undefined, at: string): void => {
		if (out.length >= limit) return;
		if (JSON.stringify(e) === JSON.stringify(a)) return;
		const bothArrays = Array.isArray(e) && Array.isArray(a);
		const bothObjects = !bothArrays && e !== null && a !== null && typeof e === "object" && typeof a === "object" && !Array.isArray(e) && !Array.isArray(a);
		if (bothArrays) {
			for (let i = 0; i < Math.max(e.length, a.length); i++) visit(e[i], a[i], `${at}[${i}]`);
		} else if (bothObjects) {
			for (const key of new Set([...Object.keys(e), ...Object.keys(a)])) visit(e[key], a[key], at === "" ? key : `${at}.${key}`);
		} else {
			const show = (v: Json | undefined) => (v === undefined ? "missing" : JSON.stringify(v).slice(0, 120));
			out.push(`${at || "(root)"}: ${show(e)} ≠ ${show(a)}`);
		}
	};
	visit(expected, actual, path);
	return out;
}

/**
 * The aspects of a run that must equal pi's: exit code and stdout; the order of the JSON/RPC
 * records (by label); their content with key order aside; the records byte for byte; the
 * session file; the request bodies.
 */
export type Aspect = "stdout" | "event order" | "event content" | "events" | "session" | "requests";

/** Labels of the records of an observation. */
export function labels(observation: Observation): string[] {
	return observation.records.map(label);
}

/** The JSON text of one aspect, as compared byte for byte. */
export function aspectText(observation: Observation, aspect: Aspect): string {
	switch (aspect) {
		case "stdout":
			return JSON.stringify({ exitCode: observation.exitCode, stdout: observation.stdout });
		case "event order":
			return labels(observation).join("\n");
		case "event content":
			return observation.records.map((record) => JSON.stringify(sortKeys(record))).join("\n");
		case "events":
			return observation.records.map((record) => JSON.stringify(record)).join("\n");
		case "session":
			return observation.sessions.map((entries) => entries.map((entry) => JSON.stringify(entry)).join("\n")).join("\n---\n");
		case "requests":
			return observation.requests.map((request) => JSON.stringify(request)).join("\n");
	}
}

/**
 * A human-readable account of how `actual` differs from `expected` in one aspect, or "" if it
 * does not.
 */
export function explainDifference(expected: Observation, actual: Observation, aspect: Aspect): string {
	if (aspectText(expected, aspect) === aspectText(actual, aspect)) return "";
	switch (aspect) {
		case "event order":
			return diffLines(labels(expected), labels(actual)).join("\n");
		case "event content":
			return recordDifferences(expected.records, actual.records)
				.filter((line) => !line.startsWith("key order only"))
				.concat(labels(expected).join() === labels(actual).join() ? [] : ["(and the event order differs)"])
				.join("\n");
		case "events": {
			const first = firstDifference(expected.records, actual.records);
			return first ? `record ${first.index} (${labels(expected)[first.index] ?? "none"}):\n  pi:         ${first.expected}\n  agentchart: ${first.actual}` : "";
		}
		case "session": {
			const first = firstDifference(expected.sessions.flat(), actual.sessions.flat());
			return first ? `entry ${first.index}:\n  pi:         ${first.expected}\n  agentchart: ${first.actual}` : "different number of files";
		}
		case "requests": {
			const first = firstDifference(expected.requests, actual.requests);
			return first ? `request ${first.index}:\n  pi:         ${first.expected}\n  agentchart: ${first.actual}` : "";
		}
		case "stdout":
			return `pi: ${aspectText(expected, aspect)}\nagentchart: ${aspectText(actual, aspect)}`;
	}
}

/**
 * Every difference between the records of two runs, record by record (aligned by label): which
 * records differ only in key order, and for the others the differing paths.
 */
export function recordDifferences(expected: readonly JsonObject[], actual: readonly JsonObject[]): string[] {
	const expectedLabels = expected.map(label);
	const actualLabels = actual.map(label);
	const keyOrderOnly = new Map<string, number>();
	const out: string[] = [];
	for (const step of align(expectedLabels, actualLabels)) {
		if (step.kind !== "same") continue;
		const e = expected[step.expected] as JsonObject;
		const a = actual[step.actual] as JsonObject;
		if (JSON.stringify(e) === JSON.stringify(a)) continue;
		if (JSON.stringify(sortKeys(e)) === JSON.stringify(sortKeys(a))) {
			const name = expectedLabels[step.expected] ?? "?";
			keyOrderOnly.set(name, (keyOrderOnly.get(name) ?? 0) + 1);
			continue;
		}
		out.push(`#${step.expected}/${step.actual} ${expectedLabels[step.expected]}: ${valueDifferences(e, a).join("; ")}`);
	}
	if (keyOrderOnly.size > 0) {
		out.unshift(`key order only: ${[...keyOrderOnly].map(([name, count]) => `${name} x${count}`).join(", ")}`);
	}
	return out;
}
