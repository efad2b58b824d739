import type { InspectableActorRef, SubscriptionLike } from "../types/actor-shapes.js";
import type { AgentMachineContext, AgentMachineEmitted, AgentMachineEvent, AgentMachineOutput } from "./types.js";

/**
 * Where the agent machine is: `"idle"`, `"ended"`, `"compacting"`, or `{ running: <step> }`
 * (`"streaming"`, `"tool-executing"`, `{ "tool-preparing": "checking" }`, ...).
 *
 * @example
 * const value: AgentStateValue = agent.actor.getSnapshot().value; // "idle", { running: "streaming" }, ...
 */
export type AgentStateValue = string | { readonly [state: string]: AgentStateValue };

/**
 * A child actor of the machine (the stream, a tool call, preflight, compaction).
 *
 * @example
 * const children: Readonly<Record<string, ChildActorLike | undefined>> = agent.actor.getSnapshot().children;
 * for (const child of Object.values(children)) console.log(child?.id, child?.getSnapshot().status);
 */
export interface ChildActorLike {
	readonly id: string;
	readonly sessionId: string;
	getSnapshot(): { readonly status: "active" | "done" | "error" | "stopped" };
}

/**
 * A snapshot of the agent machine, as `agent.actor.getSnapshot()` returns it.
 *
 * @example
 * const snapshot: AgentMachineSnapshot = agent.actor.getSnapshot();
 * if (snapshot.matches({ running: "streaming" })) console.log(snapshot.context.messages.length);
 */
export interface AgentMachineSnapshot {
	/** "active" while the machine runs; "done" after `dispose`. */
	readonly status: "active" | "done" | "error" | "stopped";
	readonly value: AgentStateValue;
	readonly context: AgentMachineContext;
	/** The running child actors by id (`stream`, `tools`, `compaction`, `steeringPoll`, `followUpPoll`, `stopCheck`). */
	readonly children: Readonly<Record<string, ChildActorLike | undefined>>;
	readonly output?: AgentMachineOutput | undefined;
	/** Why the machine failed, when `status` is "error". */
	readonly error?: unknown;
	/** True when the machine is in this state (`"idle"`, `{ running: "streaming" }`, ...). */
	matches(value: AgentStateValue): boolean;
}

/**
 * The emitted event of a type, or every emitted event for `"*"`.
 *
 * @example
 * const onEnd = (event: AgentMachineEmittedOf<"agent_end">) => console.log(event.messages.length);
 * agent.actor.on("agent_end", onEnd);
 */
export type AgentMachineEmittedOf<TType extends AgentMachineEmitted["type"] | "*"> = AgentMachineEmitted &
	(TType extends "*" ? unknown : { type: TType });

/**
 * The running agent machine behind an `Agent` (`agent.actor`): an XState actor, typed here
 * by what it offers so that these declarations do not depend on XState's (see
 * `types/actor-shapes.ts`). For XState's own `Actor` type, use `machineActorOf(agent)` from
 * `agentchart/machine`.
 *
 * @example
 * agent.actor.getSnapshot().value; // "idle"
 * agent.actor.on("message_update", (event) => console.log(event.assistantMessageEvent.type));
 */
export interface AgentActor extends InspectableActorRef {
	send(event: AgentMachineEvent): void;
	getSnapshot(): AgentMachineSnapshot;
	subscribe(observer: (snapshot: AgentMachineSnapshot) => void): SubscriptionLike;
	on<TType extends AgentMachineEmitted["type"] | "*">(type: TType, handler: (event: AgentMachineEmittedOf<TType>) => void): SubscriptionLike;
}
