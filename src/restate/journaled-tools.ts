/**
 * Tool calls as journaled steps: the tools an agent gets inside a session handler. A call's
 * outcome is one `ctx.run`, so a replay returns it without running the tool again; a call not
 * marked `replay: "safe"` first records its intent in a step of its own, so that an attempt
 * that finds the intent journaled but no outcome knows a worker died while the tool ran, and
 * answers the call as interrupted instead of running it a second time (the crash rules of the
 * local journal, `durable/journal.ts`). A replay-safe call needs no intent: it simply runs again.
 *
 * The tool's time limit is enforced inside the step, where the decision is journaled with the
 * outcome (the agent's own timer would fire on the first run and not on a replay that gets the
 * outcome at once). What the tool reports while it runs (`onUpdate`) goes to live listeners and
 * is not journaled, so an interrupted call's answer cannot quote it.
 *
 * The tool's signal is aborted when its attempt ends (Restate's `attemptCompletedSignal`): an
 * attempt lost while the worker lives on (restate-server restarted, the connection dropped) is
 * retried elsewhere, where the call is answered as interrupted and the run goes on; the tool
 * still running here is told to stop, so "not run again" is not contradicted by a call that
 * goes on beside the run's later steps. A result that is not JSON, or too large for a step, is
 * journaled as an error the model reads (`storable.ts`), not retried.
 */
import type { ObjectContext } from "@restatedev/restate-sdk";
import { interruptedText, unstorableResultText } from "../durable/journal.js";
import { ABORTED_BEFORE_RUN, timedOutText } from "../tools/preflight.js";
import type { AgentToolResult, AnyAgentTool } from "../types/agent.js";
import { describeError } from "../util/describe-error.js";
import type { JournalAwaiter } from "./journal-awaiter.js";
import { type SessionBudget, storableSerde } from "./storable.js";

/** What a tool step journals: what `execute` resolved with, or the error it threw. */
export type ToolStepOutcome = ({ kind: "value"; value: unknown } | { kind: "error"; message: string }) & {
	/** Restate cancelled the invocation (`abort`) before the call ended: the run is aborted after it. */
	cancelled: boolean;
};

/** What journaled tools need from the handler that runs them. */
export interface ToolStepHost {
	readonly ctx: ObjectContext;
	readonly awaiter: JournalAwaiter;
	/** Aborted when Restate cancels the invocation. */
	readonly cancelSignal: AbortSignal;
	/** The run is aborted (a journaled step said the invocation was cancelled). */
	abortRun(): void;
	/** The default time limit of a call (the agent's `toolTimeoutMs`; 0: none). */
	readonly toolTimeoutMs: number;
	/** The largest JSON a call's outcome may journal (see `AgentSessionsOptions.maxStepBytes`). */
	readonly maxStepBytes: number;
	/** What the session may still grow by (see `AgentSessionsOptions.maxSessionBytes`); the step's outcome counts against it. */
	readonly sessionBudget?: SessionBudget | undefined;
	/** Counts calls that actually ran here (`kind` says which); for the worker's own metrics. */
	onToolRun?: ((toolName: string, toolCallId: string, kind: "ran" | "interrupted") => void) | undefined;
}

/** Runs `execute` within its time limit, catching what it throws. */
async function runWithin(tool: AnyAgentTool, toolCallId: string, args: unknown, signal: AbortSignal, onUpdate: Parameters<AnyAgentTool["execute"]>[3], timeoutMs: number): Promise<{ kind: "value"; value: unknown } | { kind: "error"; message: string }> {
	const controller = new AbortController();
	const combined = AbortSignal.any([signal, controller.signal]);
	let timer: ReturnType<typeof setTimeout> | undefined;
	const timedOut = new Promise<"timed-out">((resolve) => {
		if (timeoutMs > 0) timer = setTimeout(() => resolve("timed-out"), timeoutMs);
	});
	try {
		const settled = await Promise.race([tool.execute(toolCallId, args as never, combined, onUpdate), timedOut]);
		if (settled === "timed-out") {
			controller.abort(new Error(`timed out after ${timeoutMs} ms`));
			return { kind: "error", message: timedOutText(tool.name, timeoutMs) };
		}
		return { kind: "value", value: settled };
	} catch (error) {
		return { kind: "error", message: describeError(error) };
	} finally {
		clearTimeout(timer);
	}
}

/**
 * `tool` with its `execute` made of journaled steps of the handler `host` runs. The agent's own
 * timer is off for it (`timeoutMs: 0`): the step enforces the limit.
 *
 * @example
 * const tools = userTools.map((tool) => journaledTool(tool, host));
 */
export function journaledTool(tool: AnyAgentTool, host: ToolStepHost): AnyAgentTool {
	const safe = tool.replay === "safe";
	const timeoutMs = tool.timeoutMs ?? host.toolTimeoutMs;
	const serde = storableSerde<ToolStepOutcome>((outcome, why) => ({ kind: "error", message: unstorableResultText(tool.name, why), cancelled: outcome.cancelled }), host.maxStepBytes, host.sessionBudget);
	const execute: AnyAgentTool["execute"] = async (toolCallId, args, signal, onUpdate) => {
		const { ctx, awaiter } = host;
		const attemptEnded = ctx.request().attemptCompletedSignal;
		// Whether this attempt recorded the intent itself: if an earlier attempt did, a worker
		// died between the intent and the outcome (the outcome step below did not complete).
		let intentHere = safe;
		if (!safe) {
			await awaiter.await(
				ctx.run(`intent ${tool.name} ${toolCallId}`, () => {
					intentHere = true;
					return { toolCallId, toolName: tool.name, args };
				}),
			);
		}
		const outcome = await awaiter.await(
			ctx.run(`tool ${tool.name} ${toolCallId}`, async (): Promise<ToolStepOutcome> => {
				const cancelSignal = host.cancelSignal;
				if (!intentHere) {
					host.onToolRun?.(tool.name, toolCallId, "interrupted");
					return { kind: "error", message: interruptedText(tool.name, undefined), cancelled: cancelSignal.aborted };
				}
				if (cancelSignal.aborted) return { kind: "error", message: ABORTED_BEFORE_RUN, cancelled: true };
				host.onToolRun?.(tool.name, toolCallId, "ran");
				const signals = signal ? [signal, cancelSignal, attemptEnded] : [cancelSignal, attemptEnded];
				const result = await runWithin(tool, toolCallId, args, AbortSignal.any(signals), onUpdate, timeoutMs);
				return { ...result, cancelled: cancelSignal.aborted };
			}, { serde }),
		);
		if (outcome.cancelled) host.abortRun();
		if (outcome.kind === "error") throw new Error(outcome.message);
		return outcome.value as AgentToolResult<unknown>;
	};
	return { ...tool, execute, timeoutMs: 0 };
}
