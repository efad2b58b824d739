import { ABORTED_BEFORE_RUN, approvalNeeded, askBeforeToolCall, errorResult, type PreflightOutcome, prepareToolCall, timedOutText, type ToolOutcome } from "../tools/preflight.js";
import type { AfterToolCallResult, AgentToolCall, AgentToolResult, AnyAgentTool } from "../types/agent.js";
import { type Deadline, clearDeadline, setDeadline } from "../util/deadlines.js";
import { describeError } from "../util/describe-error.js";
import { unlessAborted } from "../util/sleep.js";
import type { RestoredToolBatchInput, ToolBatchCommand, ToolBatchEvent, ToolBatchInput } from "./tool-batch-protocol.js";
import { type ToolIntent, interruptedText, streamedReasoning, unstorableResultText } from "../durable/journal.js";
import { fromCallback } from "xstate";

function isContentBlock(block: unknown): boolean {
	if (typeof block !== "object" || block === null) return false;
	const { type, text, data, mimeType } = block as { type?: unknown; text?: unknown; data?: unknown; mimeType?: unknown };
	if (type === "text") return typeof text === "string";
	return type === "image" && typeof data === "string" && typeof mimeType === "string";
}

/**
 * What a tool's `execute` resolved with, checked: a result object becomes the call's result; anything
 * else (`undefined`, a string, `{ text }`) an error result that says what came back, so a
 * careless tool cannot leave a tool call without a valid result.
 *
 * @example
 * checkToolResult("read", undefined).isError; // true: 'Tool "read" returned undefined instead of ...'
 */
export function checkToolResult(toolName: string, value: unknown): ToolOutcome {
	const result = value as Partial<AgentToolResult<unknown>> | undefined;
	if (typeof value === "object" && value !== null && Array.isArray(result?.content) && result.content.every(isContentBlock)) {
		return { result: value as AgentToolResult<unknown>, isError: false };
	}
	return errorResult(`Tool "${toolName}" returned ${describeError(value)} instead of a result: execute must resolve to { content: [{ type: "text", text }], details }`);
}

/** `afterToolCall`'s field-by-field override of a result; its failure is an error result. */
async function finalize(input: ToolBatchInput, toolCall: AgentToolCall, args: unknown, raw: ToolOutcome, signal: AbortSignal): Promise<ToolOutcome> {
	if (!input.afterToolCall) return raw;
	try {
		const override: AfterToolCallResult | undefined = await input.afterToolCall(
			{ assistantMessage: input.assistantMessage, toolCall, args, result: raw.result, isError: raw.isError, context: input.context },
			signal,
		);
		// As pi reads the answer: a field that is null or undefined keeps the tool's, and an answer
		// that is not an object (a hook answering `true`) has no field to replace anything with.
		if (typeof override !== "object" || override === null) return raw;
		if (override.content != null && !(Array.isArray(override.content) && override.content.every(isContentBlock))) {
			return errorResult(`afterToolCall returned content that is not a list of text and image blocks: ${describeError(override.content)}`);
		}
		const result: AgentToolResult<unknown> = {
			content: override.content ?? raw.result.content,
			details: override.details ?? raw.result.details,
		};
		const terminate = override.terminate ?? raw.result.terminate;
		if (terminate !== undefined) result.terminate = terminate;
		return { result, isError: override.isError ?? raw.isError };
	} catch (error) {
		return errorResult(describeError(error));
	}
}

/** One call in flight: its own abort (timeout, cancel) and its deadline, if it has one. */
interface CallInFlight {
	/** The call's key in its batch (what the machine names it by). */
	readonly key: string;
	readonly toolCall: AgentToolCall;
	readonly controller: AbortController;
	deadline: Deadline | undefined;
	timeoutMs: number;
	/** The call's id in the run's journal, when the run keeps one. */
	effect: string | undefined;
}

/**
 * The running batch behind {@link toolBatchActor}. A class, not closures in the actor's
 * callback: a thousand agents in the middle of a tool call each hold one, and its methods are
 * shared.
 */
class ToolBatchRun {
	#stopped = false;
	/** The calls in flight: a batch has a few, and a list costs a fraction of a Map's memory. */
	readonly #inFlight: CallInFlight[] = [];
	constructor(
		readonly input: ToolBatchInput,
		readonly sendBack: (event: ToolBatchEvent) => void,
	) {}

	/** A call's controller is the run's to give (a new one per call) and aborts with the run. */
	#begin(key: string, toolCall: AgentToolCall, effect?: string): CallInFlight {
		const call: CallInFlight = { key, toolCall, controller: this.input.abort.callController(), deadline: undefined, timeoutMs: 0, effect: this.input.journal ? effect : undefined };
		this.#inFlight.push(call);
		return call;
	}

	/** Whether `call` is still in flight (not reported, timed out, cancelled or stopped). */
	#flying(call: CallInFlight): boolean {
		return this.#inFlight.includes(call);
	}

	/** Takes `call` out of flight. */
	#land(call: CallInFlight): void {
		const index = this.#inFlight.indexOf(call);
		if (index >= 0) this.#inFlight.splice(index, 1);
	}

	/** The timeout runs from the start of execution: `beforeToolCall` may wait for a person. */
	#startClock(tool: AnyAgentTool, call: CallInFlight): void {
		call.timeoutMs = tool.timeoutMs ?? this.input.timeoutMs;
		if (call.timeoutMs <= 0) return;
		call.deadline = setDeadline(call.timeoutMs, () => this.#expire(call));
	}

	#expire(call: CallInFlight): void {
		if (!this.#flying(call)) return;
		this.#land(call);
		this.input.abort.cancelCall(call.controller, new Error(`timed out after ${call.timeoutMs} ms`));
		this.#record(call, errorResult(timedOutText(call.toolCall.name, call.timeoutMs)));
		this.sendBack({ type: "tool.timeout", callKey: call.key, timeoutMs: call.timeoutMs });
	}

	/** Records a journaled call's outcome (not waited for: the next entry is durable only after it). */
	#record(call: CallInFlight, outcome: ToolOutcome): void {
		if (call.effect) void this.input.journal?.append({ kind: "tool", phase: "outcome", effect: call.effect, result: outcome.result, isError: outcome.isError });
	}

	#stopClock(call: CallInFlight): void {
		clearDeadline(call.deadline);
		call.deadline = undefined;
	}

	/** Reports for a call still in flight (not timed out, cancelled or stopped). */
	#report(call: CallInFlight, event: ToolBatchEvent, done: boolean): void {
		if (this.#stopped || !this.#flying(call)) return;
		if (done) {
			this.#land(call);
			this.#stopClock(call);
		}
		this.sendBack(event);
	}

	/**
	 * `journaled`: the outcome was read from the journal (the call ran before a restart). Appending
	 * it again would put it after the model call that followed it, an order no restore accepts.
	 */
	#settle(call: CallInFlight, given: ToolOutcome, journaled = false): void {
		if (this.#stopped || !this.#flying(call)) return;
		const outcome = journaled ? given : this.#storable(call, given);
		if (!journaled) this.#record(call, outcome);
		this.#report(call, journaled ? { type: "tool.settled", callKey: call.key, outcome, journaled: true } : { type: "tool.settled", callKey: call.key, outcome }, true);
	}

	/**
	 * The outcome as the journal can store it: a result no store could write (a BigInt in its
	 * details) would fail every save of the session after it, so the model is told it is lost.
	 */
	#storable(call: CallInFlight, outcome: ToolOutcome): ToolOutcome {
		const why = call.effect ? this.input.journal?.unstorable?.(outcome.result, "result") : undefined;
		return why === undefined ? outcome : errorResult(unstorableResultText(call.toolCall.name, why));
	}

	/**
	 * With a journal: what the call's record says to do. An outcome is the call's result (it ran
	 * before a restart); an intent alone means a restart interrupted it: it runs again only if
	 * its tool is replay-safe, else it is answered as interrupted. A call whose restored arguments
	 * the tool no longer accepts (`argsProblem`) is answered with that, not run. Otherwise its
	 * intent is recorded (and waited for) before it runs. Returns the outcome to settle with, or
	 * undefined to run the tool; `journaled` when that outcome is the journal's own.
	 */
	async #consultJournal(call: CallInFlight, tool: AnyAgentTool, args: unknown, argsProblem: string | undefined): Promise<{ outcome: ToolOutcome; journaled: boolean } | undefined> {
		const journal = this.input.journal;
		const effect = call.effect;
		if (!journal || !effect) return argsProblem === undefined ? undefined : { outcome: errorResult(argsProblem), journaled: false };
		const record = journal.lookup(effect);
		const outcome = record?.outcome;
		if (outcome?.kind === "tool") return { outcome: { result: outcome.result, isError: outcome.isError }, journaled: true };
		if (record?.intent && tool.replay !== "safe") return { outcome: errorResult(interruptedText(tool.name, record.update)), journaled: false };
		if (argsProblem !== undefined) return { outcome: errorResult(argsProblem), journaled: false };
		if (record?.intent) return undefined;
		const intent: ToolIntent = { kind: "tool", phase: "intent", effect, toolCallId: call.toolCall.id, toolName: tool.name, args, replay: tool.replay === "safe" ? "safe" : "unsafe" };
		if (this.input.streamedFrom) {
			intent.streamedFrom = this.input.streamedFrom;
			intent.call = call.toolCall;
			const reasoning = streamedReasoning(journal, this.input.streamedFrom, this.input.assistantMessage.content, call.toolCall);
			if (reasoning) intent.reasoning = reasoning;
		}
		const pending = journal.append(intent);
		// An abort does not wait for the store (one that never answers would hold the run forever):
		// the call is then answered as aborted before it ran (see #execute).
		if (pending) await unlessAborted(pending, call.controller.signal);
		return undefined;
	}

	#failed(call: CallInFlight, error: unknown): void {
		this.#settle(call, errorResult(`Tool "${call.toolCall.name}" failed: ${describeError(error)}`));
	}

	/** Every path reports; this is the guarantee that a call always settles, whatever throws. */
	#guard(call: CallInFlight, work: Promise<void>): void {
		work.catch((error: unknown) => this.#failed(call, error));
	}

	async #preflight(call: CallInFlight, prepared: PreflightOutcome): Promise<PreflightOutcome> {
		const { beforeToolCall, assistantMessage, context } = this.input;
		if (!beforeToolCall) return prepared;
		return askBeforeToolCall(prepared, { toolCall: call.toolCall, assistantMessage, context, beforeToolCall, signal: call.controller.signal });
	}

	async #execute(call: CallInFlight, args: unknown, argsProblem?: string): Promise<void> {
		// Every path reports, whatever throws (a call must always settle).
		try {
			const { toolCall, controller } = call;
			const tool = this.input.tools.find((candidate) => candidate.name === toolCall.name);
			if (!tool) return this.#settle(call, errorResult(`Tool ${toolCall.name} not found`));
			if (!this.#flying(call)) return;
			// Streaming mode asks beforeToolCall here, then runs the call: an abort while the hook
			// decided must not let a tool that never checks its signal run after all.
			if (controller.signal.aborted) return this.#settle(call, errorResult(ABORTED_BEFORE_RUN));
			if (call.effect || argsProblem !== undefined) {
				const known = await this.#consultJournal(call, tool, args, argsProblem);
				if (known) return this.#settle(call, known.outcome, known.journaled);
				if (!this.#flying(call)) return;
				// The journal was waited for: the run may have been aborted meanwhile.
				if (controller.signal.aborted) return this.#settle(call, errorResult(ABORTED_BEFORE_RUN));
			}
			this.#startClock(tool, call);
			let updated = false;
			const onUpdate = (partialResult: AgentToolResult<unknown>) => {
				// Progress no store could write is not journaled (a restart then tells the model less); listeners still get it.
				if (call.effect && this.#flying(call) && this.input.journal?.unstorable?.(partialResult, "partialResult") === undefined) {
					void this.input.journal?.append({ kind: "tool", phase: "update", effect: call.effect, partialResult });
				}
				updated ||= !this.#stopped && this.#flying(call);
				this.#report(call, { type: "tool.update", callKey: call.key, partialResult }, false);
			};
			let raw: ToolOutcome;
			try {
				const value: unknown = await tool.execute(toolCall.id, args as Parameters<AnyAgentTool["execute"]>[1], controller.signal, onUpdate);
				raw = checkToolResult(toolCall.name, value);
			} catch (error) {
				raw = errorResult(describeError(error));
			}
			// A call that timed out or was cancelled already has its result: afterToolCall would be
			// asked about an outcome nobody records, and its answer dropped.
			if (this.#stopped || !this.#flying(call)) return;
			// The time limit is the tool's: afterToolCall may wait (for a person, say) as beforeToolCall may.
			this.#stopClock(call);
			// What holds the call from here on is the hook: a give-up after an abort says so.
			if (this.input.afterToolCall) this.#report(call, { type: "tool.returned", callKey: call.key }, false);
			if (updated) {
				// pi finishes a call once its progress reached every listener: afterToolCall (a hook that
				// reads what an update's listener wrote, or unsubscribes it, must not overtake that
				// delivery) and the call's end, which a sibling that returned meanwhile precedes.
				// Awaited also when nothing is pending (listeners that took it at once): pi's wait for its
				// update's delivery lets a sibling that returned in the same tick end first.
				await this.input.deliveryPending?.();
				if (this.#stopped || !this.#flying(call)) return;
			}
			this.#settle(call, await finalize(this.input, toolCall, args, raw, controller.signal));
		} catch (error) {
			this.#failed(call, error);
		}
	}

	receive(command: ToolBatchCommand): void {
		if (this.#stopped) return;
		switch (command.type) {
			case "preflight": {
				const call = this.#begin(command.callKey, command.toolCall);
				const work = this.#preflight(call, { kind: "prepared", args: command.args }).then((decided) => {
					const event: ToolBatchEvent =
						decided.kind === "prepared"
							? { type: "tool.prepared", callKey: call.key, args: decided.args, approval: decided.approval }
							: { type: "tool.settled", callKey: call.key, outcome: decided.outcome };
					this.#report(call, event, true);
				});
				this.#guard(call, work);
				return;
			}
			case "execute":
				void this.#execute(this.#begin(command.callKey, command.toolCall, command.effect), command.args, command.argsProblem);
				return;
			case "preflight-and-execute": {
				const call = this.#begin(command.callKey, command.toolCall, command.effect);
				const tool = this.input.tools.find((candidate) => candidate.name === command.toolCall.name);
				const work = this.#preflight(call, prepareToolCall(tool, command.toolCall)).then((decided) => {
					if (decided.kind !== "prepared") return this.#settle(call, decided.outcome);
					const approval = approvalNeeded(tool, decided.args, decided.approval);
					if (approval) return this.#report(call, { type: "tool.approval", callKey: call.key, args: decided.args, approval }, true);
					this.#report(call, { type: "tool.executing", callKey: call.key, args: decided.args }, false);
					return this.#execute(call, decided.args);
				});
				this.#guard(call, work);
				return;
			}
			case "cancel": {
				const call = this.#inFlight.find((each) => each.key === command.callKey);
				if (!call) return;
				this.#land(call);
				this.#stopClock(call);
				this.input.abort.cancelCall(call.controller, new Error("cancelled"));
				return;
			}
		}
	}

	stop(): void {
		this.#stopped = true;
		const reason: unknown = this.input.abort.signal.reason;
		for (const call of this.#inFlight) {
			this.#stopClock(call);
			this.input.abort.cancelCall(call.controller, reason);
		}
		this.#inFlight.length = 0;
	}
}

/**
 * The tool calls of one assistant message, as one actor: the machine decides which call is
 * prepared or run when (`preflight`, `execute`, `preflight-and-execute`, `cancel`); this actor
 * runs them and reports each outcome once. One actor per batch rather than per call: a call
 * gets an `AbortController` of its own while it is in flight (so a timeout or a failing sibling
 * can stop it alone), from the run (`RunAbort.callController`), and a deadline on the shared
 * timer (`util/deadlines.ts`). Aborting the run aborts every call; a call reported as timed out
 * or cancelled reports nothing more (its late result is not shown to `afterToolCall` either), and
 * a tool's `onUpdate` after its call settled is ignored.
 * A call's clock runs while its tool executes, not while the hooks decide.
 */
const toolBatchCallback = fromCallback<ToolBatchCommand, ToolBatchInput | RestoredToolBatchInput>(({ input: given, sendBack, receive }) => {
	if ("restored" in given) {
		// Restored from a snapshot taken while calls ran: the chart hands them to a new batch.
		sendBack({ type: "tools.interrupted" } satisfies ToolBatchEvent);
		return;
	}
	const input = given;
	const batch = new ToolBatchRun(input, sendBack as (event: ToolBatchEvent) => void);
	receive((command) => batch.receive(command));
	return () => batch.stop();
});

/**
 * The tool batch actor's logic: `toolBatchCallback`, persisted as a marker of calls in flight
 * (its input holds the run's functions and tools, which no snapshot can keep), so that a
 * restored actor tells the chart its calls were interrupted.
 */
export const toolBatchActor = {
	...toolBatchCallback,
	getPersistedSnapshot(snapshot: { status: string }) {
		return { status: snapshot.status, output: undefined, error: undefined, input: { restored: true } satisfies RestoredToolBatchInput };
	},
} as typeof toolBatchCallback;

