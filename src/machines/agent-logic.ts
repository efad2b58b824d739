/**
 * The actor logic an agent's chart runs on: `agentMachine` on agentchart's interpreter
 * (`interpreter/chart-logic.ts`), or, for the behaviour suite's second pass
 * (`AGENTCHART_INTERPRETER=xstate`), on XState's own interpreter. Internal: embedders use
 * `agentMachine` from `agentchart/machine`.
 */
import type { ActorLogic, AnyActorScope, EventObject } from "xstate";
import { agentMachine } from "./agent-machine.js";
import { registerEmitter } from "./emitters.js";
import { chartLogic } from "./interpreter/chart-logic.js";
import { persistAgentContext, requireHydrated } from "../durable/snapshot.js";
import { environmentVariable } from "../util/host.js";

/**
 * The agent chart on agentchart's interpreter.
 *
 * @example
 * const actor = createActor(agentLogic, { input: { config: { streamFn } } }).start();
 */
export const agentLogic = chartLogic(agentMachine, { persistContext: persistAgentContext, checkStart: requireHydrated });

type AgentLogic = typeof agentLogic;

/**
 * The agent chart on XState's interpreter, with the actor's emitter recorded as agentchart's
 * interpreter records it (so an `Agent` relays token deltas the same way on both). Every call
 * is XState's own.
 */
const xstateAgentLogic = {
	config: agentMachine.config,
	transition: (snapshot: never, event: EventObject, scope: AnyActorScope) => agentMachine.transition(snapshot, event as never, scope as never),
	getInitialSnapshot: (scope: AnyActorScope, input: never) => {
		registerEmitter(scope.self, scope.emit);
		return agentMachine.getInitialSnapshot(scope as never, input);
	},
	start: (snapshot: never) => agentMachine.start(snapshot),
	getPersistedSnapshot: (snapshot: never) => agentMachine.getPersistedSnapshot(snapshot),
	restoreSnapshot: (snapshot: never, scope: AnyActorScope) => {
		registerEmitter(scope.self, scope.emit);
		return agentMachine.restoreSnapshot(snapshot, scope as never);
	},
} as unknown as AgentLogic & ActorLogic<never, never>;

/** Which interpreter runs an agent's chart. */
export type Interpreter = "agentchart" | "xstate";

let chosen: AgentLogic | undefined;
let override: AgentLogic | undefined;

/**
 * The logic agents and the loop API run: agentchart's interpreter, or XState's when
 * `AGENTCHART_INTERPRETER=xstate` (read once: `process.env` costs a system call per read). Both
 * run the same chart; `npm test` runs the behaviour suite on each. An `Agent` reads it when it
 * is made.
 *
 * @example
 * const actor = createActor(runLogic(), { input });
 */
export function runLogic(): AgentLogic {
	if (override) return override;
	chosen ??= environmentVariable("AGENTCHART_INTERPRETER") === "xstate" ? xstateAgentLogic : agentLogic;
	return chosen;
}

/**
 * Makes something (an `Agent`, a loop run) on the given interpreter, whatever the environment
 * says: for tests that compare the two in one process. Not part of the package's API.
 *
 * @example
 * const agent = withInterpreter("xstate", () => new Agent(options));
 */
export function withInterpreter<T>(interpreter: Interpreter, make: () => T): T {
	const outer = override;
	override = interpreter === "xstate" ? xstateAgentLogic : agentLogic;
	try {
		return make();
	} finally {
		override = outer;
	}
}
