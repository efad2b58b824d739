/**
 * Bookkeeping over tool calls: the list of finished calls, the error worth reporting, and the
 * texts messaging tools sent (for dedupe).
 */
import { CallsById } from "./calls-by-id.js";
import { MessagingSendLog } from "./messaging-dedupe.js";
import { argsRecord, extractToolError, inferToolMeta, isToolTimeout, PATH_KEYS } from "./tool-descriptions.js";
import type {
	MessagingToolExtractor,
	MessagingToolSend,
	MessagingToolTarget,
	ToolActionClass,
	ToolErrorInfo,
	ToolMeta,
} from "./types.js";

const FILE_MUTATORS = new Set(["write", "edit", "multi_edit", "apply_patch", "create_file", "delete_file", "notebook_edit"]);
const COMMAND_RUNNERS = new Set(["exec", "bash", "shell"]);
const SEND_ACTIONS = new Set(["send", "thread-reply", "reply"]);

function firstString(record: Record<string, unknown>, keys: readonly string[]): string | undefined {
	for (const key of keys) {
		const value = record[key];
		if (typeof value === "string" && value.trim() !== "") return value.trim();
	}
	return undefined;
}

/**
 * The default messaging-tool recogniser: `message` with a send action (or none) and
 * `sessions_send`. The text is `message ?? content ?? text`, the target `to ?? target`.
 *
 * @example
 * defaultMessagingToolExtractor("message", { action: "send", to: "+1555", message: "Hi there" });
 * // { text: "Hi there", target: { tool: "message", to: "+1555" } }
 */
export const defaultMessagingToolExtractor: MessagingToolExtractor = (toolName, args) => {
	const record = argsRecord(args);
	if (toolName === "message") {
		const action = typeof record["action"] === "string" ? record["action"] : "send";
		if (!SEND_ACTIONS.has(action)) return undefined;
	} else if (toolName !== "sessions_send") return undefined;
	return extractSend(toolName, record);
};

function extractSend(toolName: string, record: Record<string, unknown>): MessagingToolSend {
	const target: MessagingToolTarget = { tool: toolName };
	const provider = firstString(record, ["provider", "channel"]);
	const to = firstString(record, ["to", "target"]);
	const threadId = firstString(record, ["threadId", "thread_id"]);
	if (provider !== undefined) target.provider = provider;
	if (to !== undefined) target.to = to;
	if (threadId !== undefined) target.threadId = threadId;
	const text = firstString(record, ["message", "content", "text"]);
	return text === undefined ? { target } : { text, target };
}

/**
 * Makes an extractor for a list of tool names, each treated as a messaging tool that always sends.
 *
 * @example
 * const extract = messagingToolsByName(["slack_post"]);
 * extract("slack_post", { channel: "C1", text: "Hello team" }); // { text: "Hello team", target: {...} }
 */
export function messagingToolsByName(names: readonly string[]): MessagingToolExtractor {
	const known = new Set(names);
	return (toolName, args) => (known.has(toolName) ? extractSend(toolName, argsRecord(args)) : undefined);
}

/**
 * Whether a tool call changes something, and a fingerprint naming the action (the same file,
 * the same command, the same target), so that only a success of the same action clears an error.
 *
 * @example
 * classifyToolAction("edit", { file: "/a.ts" });        // { mutating: true, fingerprint: "edit:/a.ts" }
 * classifyToolAction("read", { path: "/a.ts" });        // { mutating: false }
 */
export function classifyToolAction(toolName: string, args: unknown): ToolActionClass {
	const record = argsRecord(args);
	if (FILE_MUTATORS.has(toolName)) {
		const path = firstString(record, PATH_KEYS);
		return { mutating: true, fingerprint: `${toolName}:${path ?? ""}` };
	}
	if (COMMAND_RUNNERS.has(toolName)) {
		return { mutating: true, fingerprint: `${toolName}:${firstString(record, ["command", "cmd"]) ?? ""}` };
	}
	const send = defaultMessagingToolExtractor(toolName, args);
	if (send) return { mutating: true, fingerprint: `${toolName}:${send.target?.to ?? ""}` };
	// A status tool that is given a value to set (e.g. a model) changes the session.
	if (toolName === "session_status" && typeof record["model"] === "string") {
		return { mutating: true, fingerprint: `${toolName}:model` };
	}
	return { mutating: false };
}

interface RunningCall {
	toolName: string;
	args?: unknown;
	meta?: string;
	action: ToolActionClass;
	/** The call's key in the send log: its id and a number, so two calls with one id keep their own sends. */
	sendKey?: string;
}

/** Options of {@link ToolTracker}. */
export interface ToolTrackerOptions {
	messagingTool: MessagingToolExtractor;
	classifyAction: (toolName: string, args: unknown) => ToolActionClass;
}

/**
 * Follows tool calls from start to end.
 *
 * @example
 * const tracker = new ToolTracker({ messagingTool: defaultMessagingToolExtractor, classifyAction: classifyToolAction });
 * tracker.start("t1", "write", { path: "/a" });
 * tracker.end("t1", "write", { content: [{ type: "text", text: "disk full" }] }, true);
 * tracker.lastError?.error; // "disk full"
 */
export class ToolTracker {
	readonly metas: ToolMeta[] = [];
	readonly sends = new MessagingSendLog<MessagingToolTarget>();
	readonly #running = new CallsById<RunningCall>();
	/** Calls started so far: numbers the send-log keys of calls that share an id. */
	#started = 0;
	readonly #options: ToolTrackerOptions;
	#lastError: ToolErrorInfo | undefined;

	constructor(options: ToolTrackerOptions) {
		this.#options = options;
	}

	/** The error to report: the latest failure, but a failed change outlives unrelated successes. */
	get lastError(): ToolErrorInfo | undefined {
		return this.#lastError === undefined ? undefined : { ...this.#lastError };
	}

	/** Records a call's start. */
	start(toolCallId: string, toolName: string, args: unknown): void {
		const meta = inferToolMeta(toolName, args);
		const call: RunningCall = { toolName, args, action: this.#options.classifyAction(toolName, args) };
		if (meta !== undefined) call.meta = meta;
		this.#running.add(toolCallId, toolName, call);
		const send = this.#options.messagingTool(toolName, args);
		if (send) {
			call.sendKey = `${toolCallId}\u0000${++this.#started}`;
			this.sends.begin(call.sendKey, send);
		}
	}

	/** Records a call's end; returns the arguments it started with (undefined for a call never seen to start). */
	end(toolCallId: string, toolName: string, result: unknown, isError: boolean): unknown {
		const call: RunningCall = this.#running.take(toolCallId, toolName) ?? { toolName, action: { mutating: false } };
		const entry: ToolMeta = { toolName };
		if (call.meta !== undefined) entry.meta = call.meta;
		this.metas.push(entry);
		const error = extractToolError(result, isError);
		if (call.sendKey !== undefined) this.sends.settle(call.sendKey, error === undefined);
		if (error !== undefined) {
			const info: ToolErrorInfo = { toolName, error, mutatingAction: call.action.mutating };
			if (call.meta !== undefined) info.meta = call.meta;
			if (isToolTimeout(result)) info.timedOut = true;
			if (call.action.fingerprint !== undefined) info.actionFingerprint = call.action.fingerprint;
			// A failed read does not hide a failed change: the change stays reported until it succeeds.
			if (info.mutatingAction || !this.#failedChangeStands(call)) this.#lastError = info;
		} else if (!this.#failedChangeStands(call)) {
			this.#lastError = undefined;
		}
		return call.args;
	}

	/** A failed change stays reported until that same change succeeds. */
	#failedChangeStands(call: RunningCall): boolean {
		const previous = this.#lastError;
		return previous?.mutatingAction === true && previous.actionFingerprint !== call.action.fingerprint;
	}
}
