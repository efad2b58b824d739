/**
 * `agentchart/machine`: the agent statechart (and the reply subscriber's lifecycle chart)
 * with XState's own types, for embedding it in a larger XState system (`createActor(agentMachine, { input })`, `invoke`, `spawn`) or walking
 * it with `xstate/graph`.
 *
 * It is a subpath of its own because XState's declarations come with it: XState 5.33's types
 * need `skipLibCheck` in a project that turns on `exactOptionalPropertyTypes`. The main entry
 * (`agentchart`) and the other subpaths never reference them.
 */
import type { Actor } from "xstate";
import type { Agent } from "./agent.js";
import { agentLogic } from "./machines/agent-logic.js";
import { agentMachine } from "./machines/agent-machine.js";

export { agentLogic, agentMachine };
export { chartLogic, type ChartLogic, type ChartLogicOptions, type ChartSnapshot } from "./machines/chart-logic.js";
export { replySubscriberMachine } from "./reply/subscriber-machine.js";

/**
 * The actor behind `agent.actor`, with XState's own types: the agent chart run by agentchart's
 * interpreter (`agentLogic`). With `interpreter: "xstate"` it is `Actor<typeof agentMachine>`,
 * whose snapshots carry everything these do.
 */
export type AgentMachineActor = Actor<typeof agentLogic>;

/**
 * An agent's running machine actor (`agent.actor`) with XState's own `Actor` type, for APIs
 * that want one (`toPromise`, `waitFor`, `createActor(..., { parent })`, ...).
 *
 * @example
 * import { waitFor } from "xstate";
 * import { machineActorOf } from "agentchart/machine";
 * await waitFor(machineActorOf(agent), (snapshot) => snapshot.matches("idle"));
 */
export function machineActorOf(agent: Agent): AgentMachineActor {
	// The facade creates exactly this actor; only its declared type differs (see AgentActor).
	return agent.actor as unknown as AgentMachineActor;
}
