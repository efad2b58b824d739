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
import type { agentLogic } from "./machines/agent-logic.js";
import { agentMachine } from "./machines/agent-machine.js";

export { agentMachine };
export { replySubscriberMachine } from "./reply/subscriber-machine.js";

/**
 * The actor behind `agent.actor`, with XState's own types: the agent chart (`agentMachine`),
 * run by agentchart's interpreter. Its snapshots have the fields of `agentMachine`'s
 * (`status`, `value`, `context`, `children`, `output`, `error`, `matches()`, `can()`), and
 * its persisted snapshots are XState's format.
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
