/**
 * The hooks of pi's low-level loop that the machine asks at its decision points, each as a
 * promise actor so the asking is a state of the chart: the steering and follow-up pollers
 * (pull-based queues) and `shouldStopAfterTurn`.
 */
import { fromPromise } from "xstate";
import type { ShouldStopAfterTurn, ShouldStopAfterTurnContext } from "../types/agent.js";
import type { AgentMessage } from "../types/messages.js";

/** Input of {@link queuePollActor}. */
export interface QueuePollInput {
	poll: () => Promise<AgentMessage[]>;
}

/**
 * Asks a queue for its messages (`getSteeringMessages` / `getFollowUpMessages`); a poller
 * that returns nothing returns no messages.
 */
export const queuePollActor = fromPromise<AgentMessage[], QueuePollInput>(async ({ input }) => (await input.poll()) ?? []);

/** Input of {@link stopCheckActor}. */
export interface StopCheckInput {
	check: ShouldStopAfterTurn;
	turn: ShouldStopAfterTurnContext;
}

/** Asks `shouldStopAfterTurn`; like pi's `if`, any truthy answer stops (plain-JS hooks return counts or reasons). */
export const stopCheckActor = fromPromise<boolean, StopCheckInput>(async ({ input }) => Boolean(await input.check(input.turn)));
