/**
 * What must hold once `fuzzAgent` disposes your agent (docs/agent.md, "Steering, follow-ups,
 * abort and dispose"): the run in progress settles, and only once its `agent_end` reached the
 * listeners, unless a listener held one event for `toolAbortGraceMs` (the documented give-up);
 * nothing it started goes on unheeded; later commands throw the documented error; and nothing
 * hangs. A disposal in the middle of a run is where agentchart's own post-dispose bugs were
 * (a run that settled before its last events reached the listeners), so the fuzzer disposes at
 * random events.
 */
import type { Agent } from "../agent.js";
import { stillWaitingOn } from "./agent-checks.js";
import { describeError } from "../util/describe-error.js";
import { type AgentViolation, violation } from "./violations.js";

/** What `prompt`, `continue`, `steer` and `followUp` of a disposed agent throw (docs/from-pi.md). */
export const DISPOSED_ERROR = "Agent has been disposed: create a new Agent to run again.";

/** The commands a disposed agent refuses with {@link DISPOSED_ERROR}. */
export type RefusedAfterDispose = "steer" | "followUp" | "prompt" | "continue";

/**
 * Timers fire on whole milliseconds and the kit's listener hears an event a moment after its
 * delivery began: a give-up this much short of the grace is still the grace's.
 */
const GRACE_SLACK_MS = 5;

/** How a run's `prompt()` (or `continue()`) settled, seen at the moment it did. */
interface RunEnd {
	/** The kit's listener (the first one) had heard the run's `agent_end`. */
	endHeard: boolean;
	/** How long before the kit's listener had heard its last event. */
	quietForMs: number;
}

/**
 * The runs your agent's `prompt()` and `continue()` started that have not settled, each read at
 * the moment it settles (whether its `agent_end` had reached the listeners by then).
 */
export class OpenRuns {
	readonly #open = new Set<Promise<RunEnd>>();

	constructor(
		/** True while the kit's listener is inside a run (agent_start heard, agent_end not yet). */
		private readonly running: () => boolean,
		/** When the kit's listener heard its last event (Date.now()). */
		private readonly lastHeardAt: () => number,
	) {}

	/** A run started: its promise is kept (a rejection is not a finding here, nor unhandled). */
	track(run: Promise<unknown>): void {
		const read = (): RunEnd => ({ endHeard: !this.running(), quietForMs: Date.now() - this.lastHeardAt() });
		const settled = run.then(read, read);
		this.#open.add(settled);
		void settled.then(() => this.#open.delete(settled));
	}

	/** The runs not settled yet. */
	pending(): Promise<RunEnd>[] {
		return [...this.#open];
	}

	/** The agent was replaced (a restart): its runs are no longer the kit's to check. */
	clear(): void {
		this.#open.clear();
	}
}

/**
 * Waits for the runs that were in progress when `agent.dispose()` was called, and says what
 * went wrong: a run that did not settle within `timeoutMs`, one that settled before its
 * `agent_end` reached the listeners while they were still taking events, or one given up on
 * (documented) whose last events then never reached them. `endHeard` tells whether the kit's
 * listener has heard the run's `agent_end` by now.
 */
export async function disposedRunViolations(agent: Agent, runs: readonly Promise<RunEnd>[], endHeard: () => boolean, timeoutMs: number): Promise<AgentViolation[]> {
	const out: AgentViolation[] = [];
	const grace = agent.toolAbortGraceMs;
	for (const run of runs) {
		let timer: ReturnType<typeof setTimeout> | undefined;
		const end = await Promise.race([run, new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), timeoutMs)))]);
		clearTimeout(timer);
		if (!end) {
			out.push(violation("settle", `prompt() did not settle within ${timeoutMs} ms after dispose()${stillWaitingOn(agent)}`));
			continue;
		}
		// The documented give-up: a listener held one event for the whole grace (0: no give-up).
		const gaveUp = grace > 0 && end.quietForMs >= grace - GRACE_SLACK_MS;
		if (!end.endHeard && gaveUp) {
			// The events still queued reach the listeners once the one holding them returns.
			const deadline = Date.now() + timeoutMs;
			while (!endHeard() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 1));
			if (!endHeard()) out.push(violation("settle", `after dispose() the run's agent_end did not reach the listeners within ${timeoutMs} ms: a listener holds an event (prompt() settled after toolAbortGraceMs, ${grace} ms, as documented)`));
		} else if (!end.endHeard) {
			out.push(
				violation(
					"settle",
					`prompt() settled after dispose() before the run's agent_end reached the listeners (they had taken an event ${end.quietForMs} ms before; a disposed run gives up on its listeners only after one held an event for toolAbortGraceMs, ${grace} ms)`,
				),
			);
		}
	}
	// Nothing is left to decide once the agent is disposed: a listed call could never be answered.
	const listed = agent.pendingApprovals.map((call) => call.toolCallId);
	if (listed.length) out.push(violation("command", `pendingApprovals still lists ${listed.join(", ")} after dispose()`));
	return out;
}

/**
 * Issues a command to a disposed agent: it must throw (or, for `prompt`/`continue`, reject with)
 * {@link DISPOSED_ERROR}. Returns what went wrong, if anything.
 */
export async function refusalViolation(command: RefusedAfterDispose, call: () => unknown, timeoutMs: number): Promise<AgentViolation | undefined> {
	const refusal = (error: unknown) => (error instanceof Error && error.message === DISPOSED_ERROR ? undefined : `threw ${describeError(error)}`);
	let outcome: string | undefined;
	try {
		const result = call();
		if (result instanceof Promise) {
			let timer: ReturnType<typeof setTimeout> | undefined;
			outcome = await Promise.race([
				result.then(() => "resolved", refusal),
				new Promise<string>((resolve) => (timer = setTimeout(() => resolve(`did not settle within ${timeoutMs} ms`), timeoutMs))),
			]);
			clearTimeout(timer);
		} else outcome = "returned";
	} catch (error) {
		outcome = refusal(error);
	}
	return outcome === undefined ? undefined : violation("command", `${command}() after dispose() ${outcome} instead of throwing "${DISPOSED_ERROR}"`);
}
