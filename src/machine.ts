/**
 * `agentchart/machine`: the agent statechart (and the reply subscriber's lifecycle chart)
 * with XState's own types, for embedding it in a larger XState system (`createActor(agentMachine, { input })`, `invoke`, `spawn`) or walking
 * it with `xstate/graph`.
 *
 * It is a subpath of its own because XState's declarations come with it: XState 5.33's types
 * need `skipLibCheck` in a project that turns on `exactOptionalPropertyTypes`. The main entry
 * (`agentchart`) and the other subpaths never reference them.
 */
import type { Actor, Snapshot } from "xstate";
import { type AgentRuntime, type PersistedAgentMachine, type PlainAgentContext, hydrateAgentContext as hydrateContext } from "./durable/snapshot.js";
import { loopConfig } from "./machines/defaults.js";
import type { AgentMachineConfig, AgentMachineContext } from "./machines/types.js";
import type { Agent } from "./agent.js";
import { agentMachine } from "./machines/agent-machine.js";

export { agentMachine };
export { persistAgentContext, type AgentRuntime } from "./durable/snapshot.js";

/**
 * The machine's context from its plain data (`persistAgentContext`, a snapshot's
 * `machine.context`) and a runtime: the snapshot's tools matched by name, the settings with the
 * runtime's functions and agentchart's defaults, a fresh cancellation for the run (aborted, if the
 * run was). Throws, naming it, when a tool of the snapshot is not in the runtime. `makeConfig`:
 * how settings are merged with the defaults, agentchart's own unless given.
 *
 * @example
 * const context = hydrateAgentContext(snapshot.machine.context, { tools, config: { streamFn } });
 * context.tools.map((tool) => tool.name); // the snapshot's tools, as given
 */
export function hydrateAgentContext(
	plain: PlainAgentContext,
	runtime: AgentRuntime,
	makeConfig: (...parts: Partial<AgentMachineConfig>[]) => AgentMachineConfig = loopConfig,
): AgentMachineContext {
	return hydrateContext(plain, runtime, makeConfig);
}
export { replySubscriberMachine, type SubscriberLifecycleContext, type SubscriberLifecycleEvent } from "./reply/subscriber-machine.js";
// The chart's child actors' inputs, outputs and commands: what `agentMachine.provide({ actors })` replaces.
export type { CompactionActorInput, CompactionOutput, RestoredCompactionInput } from "./actors/compaction-protocol.js";
export type { QueuePollInput, StopCheckInput } from "./actors/loop-hooks-actors.js";
export type { RestoredStreamInput, StreamActorInput, StreamCallConfig } from "./actors/stream-protocol.js";
export type { RestoredToolBatchInput, ToolBatchCommand, ToolBatchInput } from "./actors/tool-batch-protocol.js";

/**
 * The actor behind `agent.actor`, with XState's own types: the agent chart (`agentMachine`),
 * run by agentchart's interpreter. Its snapshots have the fields of `agentMachine`'s
 * (`status`, `value`, `context`, `children`, `output`, `error`, `matches()`, `can()`), and
 * its persisted snapshots are XState's format.
 *
 * @example
 * const actor: AgentMachineActor = machineActorOf(agent);
 * actor.getSnapshot().matches("idle");
 */
export type AgentMachineActor = Actor<typeof agentMachine>;

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

/**
 * A persisted agent machine (`actor.getPersistedSnapshot()`, JSON-parsed) made ready for
 * `createActor(agentMachine, { snapshot })`: its context gets back what no snapshot keeps (the
 * tools, matched by name, and the loop's functions). After `start()`, send
 * `{ type: "agentchart.resumed" }` (with `awaitDelivery`, then `{ type: "delivered", barrier }`
 * with the snapshot's `context.barrier`: a run stored at a decision point waits for it): a wait
 * for approval takes up its deadline again (a call asked
 * without one gets the restored machine's `approvalTimeoutMs`, from then), and calls
 * the snapshot caught in flight are made again per the journal's rules (see `Agent.restore`);
 * the machine keeps no journal, so a tool call that was running runs again only if its tool is
 * `replay: "safe"` (otherwise the model is told it was interrupted). A machine restored without
 * this fails as it starts, with an error that names this function.
 *
 * @example
 * const snapshot = hydrateAgentSnapshot(JSON.parse(text), { tools, config: { streamFn } });
 * const actor = createActor(agentMachine, { snapshot }).start();
 * actor.send({ type: "agentchart.resumed" });
 */
export function hydrateAgentSnapshot(persisted: PersistedAgentMachine, runtime: AgentRuntime): Snapshot<unknown> {
	return { ...persisted, context: hydrateAgentContext(persisted.context, runtime) } as unknown as Snapshot<unknown>;
}
