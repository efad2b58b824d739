/**
 * Checks of the commands the machine's user sends (`actor.send(...)` on an embedded or bare
 * `agentMachine`), as the Agent checks its arguments (`agent-input.ts`): an XState event has no
 * types at run time, and a malformed command would otherwise enter the queues or the transcript
 * and fail a later step with an error that names nothing (`prompts is not iterable`), or change
 * a setting to a value no step knows. The action that takes a command checks it first and throws
 * a `TypeError` naming the command and the field: the actor fails with it (XState's way for a
 * programming error, reaching an `error` observer or the parent's `onError`), before the command
 * changed anything. The machine's input is checked the same way when the actor starts.
 */
import { assertAgentMessage, shown, unknownKeys } from "../agent-input.js";
import type { AgentMachineCommand, AgentMachineConfig, AgentMachineInput, AgentRunState, RunOverrides } from "./types.js";

const TOOL_EXECUTION_MODES: readonly unknown[] = ["parallel", "sequential", "streaming"];
const QUEUE_MODES: readonly unknown[] = ["all", "one-at-a-time"];
const FUNCTION_SETTINGS = [
	"streamFn",
	"convertToLlm",
	"transformContext",
	"getApiKey",
	"beforeToolCall",
	"afterToolCall",
	"shouldStopAfterTurn",
	"getSteeringMessages",
	"getFollowUpMessages",
] as const satisfies readonly (keyof AgentMachineConfig)[];
const DURATION_SETTINGS = ["toolTimeoutMs", "abortGraceMs", "streamIdleTimeoutMs", "toolAbortGraceMs", "approvalTimeoutMs"] as const satisfies readonly (keyof AgentMachineConfig)[];
/** The settings {@link settingProblem} knows. */
export const CHECKED_SETTINGS = ["toolExecution", "compaction", "outputLimitRecovery", ...FUNCTION_SETTINGS, ...DURATION_SETTINGS] as const;
const SETTING_KINDS = new Map<string, "mode" | "compaction" | "recovery" | "function" | "duration">([
	["toolExecution", "mode"],
	["compaction", "compaction"],
	["outputLimitRecovery", "recovery"],
	...FUNCTION_SETTINGS.map((key) => [key, "function"] as const),
	...DURATION_SETTINGS.map((key) => [key, "duration"] as const),
]);

/**
 * What is wrong with a loop setting's value, or undefined when nothing is (undefined itself
 * means the default). The Agent checks its fields with it too, so both say the same.
 *
 * @example
 * settingProblem("toolExecution", "wild"); // 'must be "parallel", "sequential" or "streaming", got "wild"'
 */
export function settingProblem(key: string, value: unknown): string | undefined {
	if (value === undefined) return undefined;
	const kind = SETTING_KINDS.get(key);
	if (kind === "mode") return TOOL_EXECUTION_MODES.includes(value) ? undefined : `must be "parallel", "sequential" or "streaming", got ${shown(value)}`;
	if (kind === "compaction") return compactionProblem(value);
	if (kind === "recovery") return recoveryProblem(value);
	if (kind === "function") return typeof value === "function" ? undefined : `must be a function, got ${shown(value)}`;
	// A negative duration would pass for "none" (a timeout never set, a grace already over) where a value was meant.
	if (kind === "duration") return typeof value === "number" && value >= 0 ? undefined : `must be a number of milliseconds, at least 0, got ${shown(value)}`;
	return undefined;
}

/**
 * What is wrong with compaction settings. A token count that is NaN (read from an unset
 * environment variable) fails every comparison: a NaN `reserveTokens` turned threshold compaction
 * off without a word, a NaN `keepRecentTokens` failed every compaction.
 */
function compactionProblem(value: unknown): string | undefined {
	// null is none, as undefined is (the chart reads `compaction?.enabled`).
	if (value === null) return undefined;
	if (typeof value !== "object" || value === null || Array.isArray(value)) return `must be an object of compaction settings, got ${shown(value)}`;
	const settings = value as Record<string, unknown>;
	if (settings["enabled"] !== undefined && typeof settings["enabled"] !== "boolean") return `has enabled ${shown(settings["enabled"])}: it must be true or false`;
	for (const field of ["reserveTokens", "keepRecentTokens"]) {
		const tokens = settings[field];
		// Infinity too: a threshold of window − Infinity compacts before every call, and the summary's
		// output limit (a share of reserveTokens) would be asked as Infinity.
		if (tokens !== undefined && (typeof tokens !== "number" || !(tokens >= 0) || tokens === Number.POSITIVE_INFINITY)) return `has ${field} ${shown(tokens)}: it must be a finite number of tokens, at least 0`;
	}
	if (settings["summarize"] !== undefined && typeof settings["summarize"] !== "function") return `has summarize ${shown(settings["summarize"])}: it must be a function`;
	return undefined;
}

/**
 * What is wrong with `outputLimitRecovery`: a `maxAttempts` that is not a whole number turned
 * recovery off without a word ("2" was compared as a string), and null failed the run's first
 * cut-off reply inside the chart. null is none, as undefined is.
 */
function recoveryProblem(value: unknown): string | undefined {
	if (value === null) return undefined;
	if (typeof value !== "object" || Array.isArray(value)) return `must be { maxAttempts } or undefined, got ${shown(value)}`;
	const attempts = (value as Record<string, unknown>)["maxAttempts"];
	if (typeof attempts !== "number" || !Number.isSafeInteger(attempts) || attempts < 0) return `has maxAttempts ${shown(attempts)}: it must be a whole number, at least 0`;
	return undefined;
}

/** An error of the machine's command or input (`where`: "prompt command", "input") that names the field. */
function fieldError(where: string, field: string, problem: string): TypeError {
	return new TypeError(`agentchart: the machine's ${where}: ${field} ${problem}`);
}

/**
 * What is wrong with a queue mode, or undefined when nothing is (undefined itself is the default, unless `required`).
 * The Agent checks its modes with it too.
 *
 * @example
 * queueModeProblem("everything"); // 'must be "all" or "one-at-a-time", got "everything"'
 */
export function queueModeProblem(mode: unknown, required = false): string | undefined {
	return (mode === undefined && !required) || QUEUE_MODES.includes(mode) ? undefined : `must be "all" or "one-at-a-time", got ${shown(mode)}`;
}

function checkQueueModes(where: string, modes: { steeringMode?: unknown; followUpMode?: unknown }): void {
	for (const field of ["steeringMode", "followUpMode"] as const) {
		const problem = queueModeProblem(modes[field]);
		if (problem) throw fieldError(where, field, problem);
	}
}

/**
 * The first field of a run's state that no run can start with, and what is wrong with it, or
 * undefined. Shallow on purpose: the transcript may be long, and each message entered it checked.
 * The Agent checks its state with it too (`agent.state` is mutable, as pi's is).
 *
 * @example
 * runStateProblem({ model: null }); // { field: "model", problem: "must be a model object, got null" }
 */
export function runStateProblem(state: Partial<AgentRunState>): { field: keyof AgentRunState; problem: string } | undefined {
	if (state.systemPrompt !== undefined && typeof state.systemPrompt !== "string") return { field: "systemPrompt", problem: `must be a string, got ${shown(state.systemPrompt)}` };
	if (state.model !== undefined && (typeof state.model !== "object" || state.model === null)) return { field: "model", problem: `must be a model object, got ${shown(state.model)}` };
	if (state.messages !== undefined && !Array.isArray(state.messages)) return { field: "messages", problem: `must be a list of messages, got ${shown(state.messages)}` };
	if (state.tools !== undefined && !Array.isArray(state.tools)) return { field: "tools", problem: `must be a list of tools, got ${shown(state.tools)}` };
	return undefined;
}

/** `prefix`: where the fields sit ("state." in a command). */
function checkRunState(where: string, prefix: string, state: Partial<AgentRunState>): void {
	const problem = runStateProblem(state);
	if (problem) throw fieldError(where, `${prefix}${problem.field}`, problem.problem);
}

function checkConfig(where: string, config: unknown): void {
	if (config === undefined) return;
	if (typeof config !== "object" || config === null || Array.isArray(config)) throw fieldError(where, "config", `must be an object of loop settings, got ${shown(config)}`);
	for (const key of CHECKED_SETTINGS) {
		const problem = settingProblem(key, (config as Partial<AgentMachineConfig>)[key]);
		if (problem) throw fieldError(where, `config.${key}`, problem);
	}
}

function checkOverrides(command: string, overrides: RunOverrides): void {
	const where = `${command} command`;
	checkQueueModes(where, overrides);
	const wait = overrides.awaitDelivery;
	if (wait !== undefined && wait !== true && wait !== false && wait !== "start") throw new TypeError(`agentchart: the machine's ${where}: awaitDelivery must be true, false or "start", got ${shown(wait)}`);
	if (wait === "start" && command === "update") throw new TypeError(`agentchart: the machine's ${where}: awaitDelivery "start" is for a run's start: give it with prompt or continue`);
	if (overrides.state !== undefined) checkRunState(where, "state.", overrides.state);
	checkConfig(where, overrides.config);
}

/**
 * Throws a `TypeError` naming the command and the field unless `command` is well formed.
 * Commands the machine sends itself, and the Agent's (checked at its API), pass.
 *
 * @example
 * assertCommand({ type: "steer", message: undefined }); // TypeError: agentchart: the machine's steer command: message: expected a message object ...
 */
export function assertCommand(command: AgentMachineCommand): void {
	switch (command.type) {
		case "prompt":
			if (!Array.isArray(command.messages)) throw new TypeError(`agentchart: the machine's prompt command: messages must be a list of messages, got ${shown(command.messages)}`);
			command.messages.forEach((message: unknown, index) => assertAgentMessage(message, `agentchart: the machine's prompt command: messages[${index}]`));
			checkOverrides("prompt", command);
			return;
		case "continue":
		case "update":
			checkOverrides(command.type, command);
			return;
		case "steer":
		case "followUp":
			assertAgentMessage(command.message, `agentchart: the machine's ${command.type} command: message`);
			return;
		case "queue.clear":
			if (command.queue !== "steering" && command.queue !== "followUp" && command.queue !== "all") {
				throw new TypeError(`agentchart: the machine's queue.clear command: queue must be "steering", "followUp" or "all", got ${shown(command.queue)}`);
			}
			return;
		case "queue.mode":
			if (command.queue !== "steering" && command.queue !== "followUp") {
				throw new TypeError(`agentchart: the machine's queue.mode command: queue must be "steering" or "followUp", got ${shown(command.queue)}`);
			}
			if (!QUEUE_MODES.includes(command.mode)) throw new TypeError(`agentchart: the machine's queue.mode command: mode must be "all" or "one-at-a-time", got ${shown(command.mode)}`);
			return;
		case "approve":
		case "reject": {
			// A misspelt field is refused, not ignored: an approval whose `arguments` went unread would run the model's.
			const unknown = unknownKeys(command, DECISION_FIELDS[command.type]);
			if (unknown !== undefined) throw new TypeError(`agentchart: the machine's ${command.type} command: unknown field ${unknown} (it takes ${DECISION_FIELDS[command.type].map((key) => `"${key}"`).join(", ")})`);
			if (command.type === "reject" && command.reason !== undefined && typeof command.reason !== "string") throw new TypeError(`agentchart: the machine's reject command: reason must be a text, got ${shown(command.reason)}`);
			return;
		}
		default:
			return;
	}
}

const DECISION_FIELDS: Record<"approve" | "reject", readonly string[]> = {
	approve: ["type", "toolCallId", "args", "decidedAt"] satisfies (keyof Extract<AgentMachineCommand, { type: "approve" }>)[],
	reject: ["type", "toolCallId", "reason", "decidedAt"] satisfies (keyof Extract<AgentMachineCommand, { type: "reject" }>)[],
};

/**
 * Throws a `TypeError` naming the field unless `input` is a well-formed machine input (or none):
 * an actor started with a malformed one fails at its start, where it used to run with it (a
 * transcript given as a string ended the first run with an error that named nothing; a queue
 * mode or tool execution mode no step knows was taken as it was). Shallow for the transcript (an
 * agent hands its whole transcript to each run: checking every message would make each run's
 * start grow with the conversation; the `Agent` checks them as they come in); queued messages are
 * checked each.
 *
 * @example
 * assertMachineInput({ messages: "hello" }); // TypeError: agentchart: the machine's input: messages must be a list of messages, got "hello"
 */
export function assertMachineInput(input: AgentMachineInput | undefined): void {
	if (input === undefined) return;
	if (typeof input !== "object" || input === null || Array.isArray(input)) {
		throw new TypeError(`agentchart: the machine's input must be an object such as { model, tools, config: { streamFn } }, got ${shown(input)}`);
	}
	checkRunState("input", "", input);
	assertQueued("steeringQueue", input.steeringQueue);
	assertQueued("followUpQueue", input.followUpQueue);
	checkQueueModes("input", input);
	if (input.runs !== undefined && !(Number.isSafeInteger(input.runs) && input.runs >= 0)) throw fieldError("input", "runs", `must be a whole number of at least 0, got ${shown(input.runs)}`);
	if (input.awaitDelivery !== undefined && typeof input.awaitDelivery !== "boolean") throw fieldError("input", "awaitDelivery", `must be true or false, got ${shown(input.awaitDelivery)}`);
	checkConfig("input", input.config);
}

function assertQueued(queue: "steeringQueue" | "followUpQueue", queued: unknown): void {
	if (queued === undefined) return;
	if (!Array.isArray(queued)) throw fieldError("input", queue, `must be a list of messages, got ${shown(queued)}`);
	for (let index = 0; index < queued.length; index++) assertAgentMessage(queued[index], `agentchart: the machine's input: ${queue}[${index}]`);
}
