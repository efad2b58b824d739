import { agentMachine } from "./agent-machine.js";
import { chartLogic } from "./chart-logic.js";
import { copyContext } from "./context.js";

/**
 * The agent chart as actor logic run by agentchart's interpreter (see `chart-logic.ts`): what
 * an `Agent` runs by default, and what to embed for the same speed (`createActor(agentLogic,
 * { input })`, `invoke: { src: agentLogic }`). `agentMachine` is the same chart on XState's
 * interpreter.
 *
 * @example
 * import { createActor } from "xstate";
 * const actor = createActor(agentLogic, { input: { config: { streamFn } } }).start();
 * actor.on("agent_end", (event) => console.log(event.messages.length));
 */
export const agentLogic = chartLogic(agentMachine, { copyContext });
