/**
 * Your code, called the way the engine calls it, with its contract checked: a tool's `execute`
 * settles once and reports progress only while it runs, and returns a result; a hook does not
 * throw. What breaks the contract is reported, and the engine still gets what your code gave it
 * (so the run goes on as it would without the kit).
 */
import { checkToolResult } from "../../actors/tool-batch-actor.js";
import type { Agent, AgentOptions } from "../../agent.js";
import type { AgentMachineEvent } from "../../machines/types.js";
import type { CompactionSettings } from "../../compaction/settings.js";
import type { AfterToolCallHook, AfterToolCallResult, AgentToolResult, AnyAgentTool, BeforeToolCallResult, ConvertToLlm, TransformContext } from "../../types/agent.js";
import { shown, unknownKeys } from "../../agent-input.js";
import { describeError } from "../../util/describe-error.js";
import type { AgentViolation } from "../violations.js";
import { violation } from "../violations.js";

/** How a call of your code ended. */
export type Settlement<T> = { ok: true; value: T } | { ok: false; error: unknown };

/**
 * An error the language throws at a mistake in code (reading a field of undefined, a name that is
 * not defined, a stack overflow), rather than one a tool throws on purpose to report a failure
 * (an `Error` of its own, whose message becomes the error result). One that carries a `cause`
 * wraps a failure beneath it (Node's fetch throws `TypeError("fetch failed")` with the network
 * error as its cause): a failure, not a mistake.
 */
function isCodingError(error: unknown): error is Error {
	return (error instanceof TypeError || error instanceof ReferenceError || error instanceof RangeError) && error.cause === undefined;
}

/** A call's arguments for a report (JSON, cut short). */
function argumentsText(params: unknown): string {
	let text: string;
	try {
		text = JSON.stringify(params) ?? String(params);
	} catch {
		text = String(params);
	}
	return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}

/**
 * Runs a tool's `execute` and watches it: the returned promise settles with its first
 * settlement; `report` hears of a second settlement (a hand-made thenable that calls back twice),
 * of `onUpdate` called after it settled, of a value that is not a tool result, and of a
 * `TypeError`, `ReferenceError` or `RangeError` it threw (a mistake in the tool, not a failure
 * it reports).
 *
 * @example
 * const settled = runToolChecked(tool, "c1", args, signal, onUpdate, (v) => violations.push(v));
 */
export function runToolChecked(
	tool: AnyAgentTool,
	toolCallId: string,
	params: unknown,
	signal: AbortSignal | undefined,
	onUpdate: ((partial: AgentToolResult<unknown>) => void) | undefined,
	report: (found: AgentViolation) => void,
): Promise<Settlement<AgentToolResult<unknown>>> {
	let settlements = 0;
	let afterSettleUpdates = 0;
	const name = `tool "${tool.name}" (call ${toolCallId})`;
	const checkedUpdate = (partial: AgentToolResult<unknown>) => {
		if (settlements > 0) {
			// Once is enough to say it: a tool that streams after settling does so many times.
			if (afterSettleUpdates++ === 0) report(violation("tool-contract", `${name} called onUpdate after its execute had settled`));
			return;
		}
		onUpdate?.(partial);
	};
	return new Promise((resolve) => {
		const settle = (outcome: Settlement<AgentToolResult<unknown>>) => {
			settlements++;
			if (settlements === 2) report(violation("tool-contract", `${name} settled twice: its execute's promise ${outcome.ok ? "resolved" : "rejected"} again after it had settled`));
			if (settlements > 1) return;
			// Judged by the engine's own check: what it turns into an error result is what is reported.
			if (outcome.ok && checkToolResult(tool.name, outcome.value).isError) {
				report(violation("tool-contract", `${name} returned ${describeError(outcome.value)} instead of a result ({ content: [...], details }, content a list of { type: "text", text: string } and { type: "image", data: string, mimeType: string } blocks)`));
			}
			if (!outcome.ok && isCodingError(outcome.error)) {
				report(violation("tool-threw", `${name} threw ${outcome.error.name}: ${outcome.error.message} (arguments ${argumentsText(params)}): a mistake in the tool rather than a failure it reports (for one, throw an Error of your own: its message becomes the error result)`));
			}
			resolve(outcome);
		};
		let returned: unknown;
		try {
			returned = tool.execute(toolCallId, params as never, signal, checkedUpdate as never);
		} catch (error) {
			settle({ ok: false, error });
			return;
		}
		const thenable = returned as PromiseLike<AgentToolResult<unknown>> | undefined;
		if (thenable && typeof thenable.then === "function") {
			// Through the thenable's own `then`: a hand-made one may call back more than once, which an `await` would hide.
			thenable.then(
				(value) => settle({ ok: true, value }),
				(error: unknown) => settle({ ok: false, error }),
			);
		} else settle({ ok: true, value: returned as AgentToolResult<unknown> });
	});
}

/**
 * A tool's `needsApproval` rule wrapped: a throw (`hook-threw`) and an answer other than true or
 * false (`hook-contract`: a rule written `async` answers a promise) are reported. The engine
 * fails closed on both, so every call of the tool waits for a person: a mistake that looks like
 * caution. The engine still gets what the rule gave. A rule that is not a function is returned
 * as it is.
 *
 * @example
 * const tool = { ...yours, needsApproval: checkedNeedsApproval(yours, report) };
 */
export function checkedNeedsApproval(tool: AnyAgentTool, report: (found: AgentViolation) => void): AnyAgentTool["needsApproval"] {
	const rule = tool.needsApproval;
	if (typeof rule !== "function") return rule;
	let calls = 0;
	return (args: unknown) => {
		const name = `tool "${tool.name}"'s needsApproval on its ${callLabel(++calls)} call (arguments ${argumentsText(args)})`;
		let answer: unknown;
		try {
			answer = rule(args as never);
		} catch (error) {
			report(violation("hook-threw", `${name} threw: ${describeError(error)}; the engine asks a person about every call it throws on`));
			throw error;
		}
		if (typeof answer !== "boolean" && answer !== undefined) {
			const what = typeof (answer as { then?: unknown } | null)?.then === "function" ? "a promise (is it async?)" : shown(answer);
			report(violation("hook-contract", `${name} returned ${what} where the engine reads true or false synchronously; it asks a person about every such call`));
		}
		return answer as boolean;
	};
}

/**
 * What is wrong with a compaction `summarize` answer: anything but text with something in it (the
 * engine fails the compaction on it, and a context that outgrew the model's window stays so).
 *
 * @example
 * summaryAnswer(42); // "42, not a summary's text: the engine failed the compaction"
 */
export function summaryAnswer(answer: unknown): string | undefined {
	if (typeof answer === "string" && answer.trim() !== "") return undefined;
	return `${shown(answer)}, not a summary's text: the engine failed the compaction`;
}

/**
 * Compaction settings whose `summarize` reports a throw (`hook-threw`) or an answer that is not a
 * summary (`hook-contract`); the engine still gets what it gave. Settings without one are
 * returned as they are.
 *
 * @example
 * const compaction = checkedCompaction(yours.compaction, report);
 */
export function checkedCompaction(settings: CompactionSettings | undefined, report: (found: AgentViolation) => void): CompactionSettings | undefined {
	const summarize = settings?.summarize;
	if (!settings || !summarize) return settings;
	return { ...settings, summarize: checkedSummarize(summarize, report) };
}

/**
 * A compaction's `summarize` that reports a throw or an answer that is not a summary (see
 * {@link checkedCompaction}).
 *
 * @example
 * const summarize = checkedSummarize(yours.compaction.summarize, report);
 */
export function checkedSummarize(summarize: Summarize, report: (found: AgentViolation) => void): Summarize {
	return reportThrows<Parameters<Summarize>, ReturnType<Summarize>>("compaction.summarize", summarize, (request) => `${request.messages.length} messages`, report, summaryAnswer);
}

type Summarize = NonNullable<CompactionSettings["summarize"]>;

/** An ordinal: 1st, 2nd, 3rd, 4th, 11th, 21st. */
function callLabel(count: number): string {
	const suffixes = ["th", "st", "nd", "rd"];
	const tens = count % 100;
	return `${count}${suffixes[(tens - 20) % 10] ?? suffixes[tens] ?? suffixes[0]}`;
}

/**
 * A hook wrapped so a throw is reported (with how many times the hook had been called) and
 * rethrown, so the engine handles it as it would. `describe` names the call for the report;
 * `checkAnswer`, when given, says what is wrong with what the hook returned (reported as
 * `hook-contract`; the engine still gets it).
 *
 * @example
 * agent.beforeToolCall = reportThrows("beforeToolCall", agent.beforeToolCall, (input) => input.toolCall.name, report, beforeToolCallAnswer);
 */
export function reportThrows<A extends unknown[], R>(hookName: string, hook: (...args: A) => R, describe: (...args: A) => string, report: (found: AgentViolation) => void, checkAnswer?: (answer: unknown) => string | undefined): (...args: A) => R {
	let calls = 0;
	return (...args: A): R => {
		const count = ++calls;
		const failed = (error: unknown) => report(violation("hook-threw", `${hookName} threw on its ${callLabel(count)} call (${describe(...args)}): ${describeError(error)}`));
		const answered = (answer: unknown) => {
			const wrong = checkAnswer?.(answer);
			if (wrong !== undefined) report(violation("hook-contract", `${hookName} on its ${callLabel(count)} call (${describe(...args)}) returned ${wrong}`));
		};
		let result: R;
		try {
			result = hook(...args);
		} catch (error) {
			failed(error);
			throw error;
		}
		const promise = result as unknown as PromiseLike<unknown> | undefined;
		if (promise && typeof promise.then === "function") promise.then(answered, failed);
		else answered(result);
		return result;
	};
}

const BEFORE_FIELDS: readonly string[] = ["block", "reason", "terminate", "approval"] satisfies (keyof BeforeToolCallResult)[];
const AFTER_FIELDS: readonly string[] = ["content", "details", "isError", "terminate"] satisfies (keyof AfterToolCallResult)[];

/** An answer's fields the engine does not read, as a report says them; undefined when there are none. */
function unreadFields(answer: object, known: readonly string[]): string | undefined {
	const unread = unknownKeys(answer, known);
	return unread === undefined ? undefined : `${unread} (the engine reads only ${known.join(", ")})`;
}

/**
 * What is wrong with a `beforeToolCall` answer, as the engine would take it: anything but
 * nothing or `{ block, reason, terminate, approval }`. The string `"block"` or `{ blocked: true }`
 * is read as no objection, so the call the hook meant to stop runs.
 *
 * @example
 * beforeToolCallAnswer("block"); // '"block", which the engine reads as no objection: the call runs (to stop it, return { block: true, reason })'
 */
export function beforeToolCallAnswer(answer: unknown): string | undefined {
	if (answer === undefined || answer === null) return undefined;
	if (typeof answer !== "object" || Array.isArray(answer)) return `${shown(answer)}, which the engine reads as no objection: the call runs (to stop it, return { block: true, reason })`;
	const unread = unreadFields(answer, BEFORE_FIELDS);
	if (unread !== undefined) return `an answer with a field the engine does not read, ${unread}`;
	const { block, terminate, approval, reason } = answer as Record<string, unknown>;
	if (block !== undefined && typeof block !== "boolean") return `block: ${shown(block)} where the engine reads true or false`;
	if (terminate !== undefined && typeof terminate !== "boolean") return `terminate: ${shown(terminate)} where the engine reads true or false`;
	if (approval !== undefined && approval !== "required") return `approval: ${shown(approval)} where the engine reads only "required"`;
	if (reason !== undefined && typeof reason !== "string") return `reason: ${shown(reason)} where the engine reads text`;
	return undefined;
}

/**
 * What is wrong with an `afterToolCall` answer, as the engine would take it: content that is not
 * a list of text and image blocks (the engine answers the call with an error result instead), or
 * a field it does not read.
 *
 * @example
 * afterToolCallAnswer({ content: "done" }); // 'content "done", not a list of text and image blocks: the engine answered the call with an error result'
 */
export function afterToolCallAnswer(answer: unknown): string | undefined {
	if (answer === undefined || answer === null) return undefined;
	if (typeof answer !== "object" || Array.isArray(answer)) return `${shown(answer)}, which the engine ignores (return { content, details, isError, terminate } to change the result)`;
	const unread = unreadFields(answer, AFTER_FIELDS);
	if (unread !== undefined) return `an answer with a field the engine does not read, ${unread}`;
	const { content, isError, terminate } = answer as Record<string, unknown>;
	// Judged by the engine's own check of a tool's result, on the content alone.
	if (content !== undefined && content !== null && checkToolResult("afterToolCall", { content, details: undefined }).isError) {
		return `content ${shown(content)}, not a list of text and image blocks: the engine answered the call with an error result`;
	}
	if (isError !== undefined && typeof isError !== "boolean") return `isError: ${shown(isError)} where the engine reads true or false`;
	if (terminate !== undefined && typeof terminate !== "boolean") return `terminate: ${shown(terminate)} where the engine reads true or false`;
	return undefined;
}

/**
 * What a listener that threw is reported as (`message`: its error, described as the agent
 * describes it), by the walk (which hears the agent's `listener.error`) and by the fuzzer alike.
 *
 * @example
 * report(listenerThrew("listener bug", "tool_execution_end")); // [listener-threw] a listener threw at tool_execution_end: listener bug
 */
export function listenerThrew(message: string, during?: string): AgentViolation {
	return violation("listener-threw", `a listener threw${during ? ` at ${during}` : ""}: ${message}`);
}

/**
 * Takes hold of what the agent sends its machine (through `agent.actor`, which keeps the agent's
 * machine from then on): a `listener.error` (a listener of yours threw, or rejected) is reported
 * as {@link listenerThrew}, unless its error is `ignore`; `hold` may keep an event back (returns
 * true when it did). The walk and the fuzzer both watch this way, so a listener subscribed
 * anywhere (options, factory, later) is heard. Returns the machine's own `send`.
 *
 * @example
 * const send = watchMachine(agent, report);
 */
export function watchMachine(agent: Agent, report: (found: AgentViolation) => void, options: { ignore?: string; hold?: (event: AgentMachineEvent) => boolean } = {}): (event: AgentMachineEvent) => void {
	const actor = agent.actor;
	const send = actor.send.bind(actor) as (event: AgentMachineEvent) => void;
	(actor as { send: (event: AgentMachineEvent) => void }).send = (event: AgentMachineEvent) => {
		if (options.hold?.(event)) return;
		if (event.type === "listener.error" && event.error !== options.ignore) report(listenerThrew(event.error, event.during));
		send(event);
	};
	return send;
}

/**
 * The hooks of your options the kit lets run as the engine calls them (`afterToolCall`,
 * `transformContext`, `convertToLlm`), wrapped so a throw is reported (`hook-threw`); only those
 * you set. Both the walk and the fuzzer use it, so both say the same of the same hook.
 *
 * @example
 * const options = { ...yours, ...checkedHooks(yours, report) };
 */
export function checkedHooks(options: AgentOptions, report: (found: AgentViolation) => void): Pick<AgentOptions, "afterToolCall" | "transformContext" | "convertToLlm"> {
	const { afterToolCall, transformContext, convertToLlm } = options;
	return {
		...(afterToolCall ? { afterToolCall: reportThrows<Parameters<AfterToolCallHook>, ReturnType<AfterToolCallHook>>("afterToolCall", afterToolCall, (input) => `tool "${input.toolCall.name}", call ${input.toolCall.id}`, report, afterToolCallAnswer) } : {}),
		...(transformContext ? { transformContext: reportThrows<Parameters<TransformContext>, ReturnType<TransformContext>>("transformContext", transformContext, (messages) => `${messages.length} messages`, report) } : {}),
		...(convertToLlm ? { convertToLlm: reportThrows<Parameters<ConvertToLlm>, ReturnType<ConvertToLlm>>("convertToLlm", convertToLlm, (messages) => `${messages.length} messages`, report) } : {}),
	};
}
