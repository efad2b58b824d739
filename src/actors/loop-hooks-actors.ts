/**
 * The hooks of pi's low-level loop that the machine asks at its decision points, each as a
 * promise actor so the asking is a state of the chart: the steering and follow-up pollers
 * (pull-based queues) and `shouldStopAfterTurn`.
 */
import { fromPromise } from "xstate";
import { assertTranscript } from "../agent-input.js";
import type { ShouldStopAfterTurn, ShouldStopAfterTurnContext } from "../types/agent.js";
import type { AgentMessage } from "../types/messages.js";

/**
 * Input of {@link queuePollActor}.
 *
 * @example
 * const input: QueuePollInput = { poll: async () => [], hook: "getSteeringMessages" };
 */
export interface QueuePollInput {
	poll: () => Promise<AgentMessage[]>;
	/** The hook asked, for the error when its answer is not a list of messages. */
	hook: "getSteeringMessages" | "getFollowUpMessages";
}

/**
 * A queue poller's answer as messages: nothing is none; anything else than a list of messages is
 * a `TypeError` naming the hook (a text answered was spread into the transcript letter by letter).
 *
 * @example
 * polledMessages(undefined, "getSteeringMessages"); // []
 */
export function polledMessages(answer: unknown, hook: QueuePollInput["hook"]): AgentMessage[] {
	if (answer === undefined || answer === null) return [];
	assertTranscript(answer, `${hook}()`);
	return answer;
}

/**
 * Asks a queue for its messages (`getSteeringMessages` / `getFollowUpMessages`); a poller
 * that returns nothing returns no messages.
 */
export const queuePollActor = fromPromise<AgentMessage[], QueuePollInput>(async ({ input }) => polledMessages(await input.poll(), input.hook));

/**
 * Input of {@link stopCheckActor}.
 *
 * @example
 * const describe = (input: StopCheckInput) => `asked after a turn with ${input.turn.toolResults.length} tool results`;
 */
export interface StopCheckInput {
	check: ShouldStopAfterTurn;
	turn: ShouldStopAfterTurnContext;
}

/** Asks `shouldStopAfterTurn`; like pi's `if`, any truthy answer stops (plain-JS hooks return counts or reasons). */
export const stopCheckActor = fromPromise<boolean, StopCheckInput>(async ({ input }) => Boolean(await input.check(input.turn)));
