/**
 * The parts of XState's actors and machines that agentchart's public API reads, written out
 * as plain structural types.
 *
 * Why not XState's own types: XState 5.33's declarations do not compile in a consumer with
 * `exactOptionalPropertyTypes` unless `skipLibCheck` is on (errors in its `setup.d.ts`), and
 * any reference to them from our declarations would pull them into every consumer's program.
 * A real XState actor or machine satisfies these shapes, so nothing changes for callers; the
 * fully typed machine is in `agentchart/machine` for those who embed it.
 */

/**
 * A subscription that can be cancelled (XState's `Subscription`).
 *
 * @example
 * const subscription: SubscriptionLike = agent.actor.subscribe((snapshot) => console.log(snapshot.value));
 * subscription.unsubscribe();
 */
export interface SubscriptionLike {
	unsubscribe(): void;
}

/**
 * An actor as inspection reads it (XState's `ActorRef`, the parts used).
 *
 * @example
 * const actor: InspectableActorRef = agent.actor;
 * const subscription = actor.system.inspect((event) => console.log(event.type, event.actorRef.sessionId));
 */
export interface InspectableActorRef {
	readonly id: string;
	readonly sessionId: string;
	getSnapshot(): unknown;
	readonly system: ActorSystemLike;
	readonly src?: unknown;
	readonly logic?: unknown;
	readonly _parent?: InspectableActorRef | undefined;
}

/**
 * The actor system of an actor: where inspection observers are registered.
 *
 * @example
 * const system: ActorSystemLike = agent.actor.system;
 * const subscription = system.inspect({ next: (event) => console.log(event.type) });
 */
export interface ActorSystemLike {
	inspect(observer: ((event: ActorInspectionEvent) => void) | { next?: (event: ActorInspectionEvent) => void }): SubscriptionLike;
}

/**
 * An event object as XState delivers it: a `type` and any payload.
 *
 * @example
 * const event: EventObjectLike | undefined = inspectionEvent.event;
 * if (inspectionEvent.type === "@xstate.event" && event) console.log("received", event.type);
 */
export interface EventObjectLike {
	type: string;
}

/**
 * The actor an inspection event is about. XState types it this narrowly (`ActorRefLike`);
 * at run time it is the full actor, which the inspector reads as an {@link InspectableActorRef}.
 *
 * @example
 * agent.actor.system.inspect((event) => {
 *   const actor: InspectedActorLike = event.actorRef;
 *   console.log(actor.sessionId, actor.getSnapshot());
 * });
 */
export interface InspectedActorLike {
	readonly sessionId: string;
	getSnapshot(): unknown;
}

/**
 * An XState inspection event (`actor.system.inspect`), the fields agentchart reads. One open
 * shape rather than XState's union, so every kind XState reports (including kinds added in
 * later versions) fits; readers check `type` and the fields they need.
 *
 * @example
 * agent.actor.system.inspect((event: ActorInspectionEvent) => {
 *   if (event.type === "@xstate.snapshot") console.log(event.actorRef.sessionId, event.event?.type);
 * });
 */
export interface ActorInspectionEvent {
	type: string;
	actorRef: InspectedActorLike;
	rootId: string;
	/** The event delivered (`@xstate.event`) or that caused a snapshot or microstep. */
	event?: EventObjectLike | undefined;
	/** The actor that sent the event (`@xstate.event`). */
	sourceRef?: InspectedActorLike | undefined;
	/** The snapshot after the step (`@xstate.snapshot`, `@xstate.microstep`). */
	snapshot?: unknown;
	/** The transitions taken (`@xstate.microstep`). */
	_transitions?: readonly unknown[] | undefined;
	/** The action executed (`@xstate.action`). */
	action?: { type: string; params: unknown } | undefined;
}

/**
 * A transition of a state node, as a machine definition holds it.
 *
 * @example
 * const targets = [...stateNode.transitions.values()].flat().map((transition: TransitionDefinitionLike) => transition.target?.map((node) => node.id));
 */
export interface TransitionDefinitionLike {
	readonly target?: readonly StateNodeLike[] | undefined;
	readonly guard?: unknown;
}

/**
 * A state node of a machine definition (XState's `StateNode`, the parts read).
 *
 * @example
 * const describe = (node: StateNodeLike) => `${node.id} (${node.type}): ${Object.keys(node.states).join(", ")}`;
 * console.log(Object.values(agentMachine.root.states).map(describe));
 */
export interface StateNodeLike {
	readonly id: string;
	readonly key: string;
	readonly type: string;
	readonly description?: string | undefined;
	readonly parent?: StateNodeLike | undefined;
	readonly states: Readonly<Record<string, StateNodeLike>>;
	readonly initial?: { readonly target?: readonly StateNodeLike[] | undefined } | undefined;
	readonly transitions: ReadonlyMap<string, readonly TransitionDefinitionLike[]>;
	readonly always?: readonly TransitionDefinitionLike[] | undefined;
	readonly invoke: readonly { readonly id: string; readonly src: unknown }[];
}

/**
 * A machine definition (XState's `StateMachine`, the parts read).
 *
 * @example
 * const machine: StateMachineLike = agentMachine;
 * console.log(machine.id, Object.keys(machine.root.states)); // "agent", ["idle", "running", ...]
 */
export interface StateMachineLike {
	readonly id: string;
	readonly root: StateNodeLike;
}
