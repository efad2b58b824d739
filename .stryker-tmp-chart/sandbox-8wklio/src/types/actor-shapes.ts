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
// @ts-nocheck


/** A subscription that can be cancelled (XState's `Subscription`). */
export interface SubscriptionLike {
	unsubscribe(): void;
}

/** An actor as inspection reads it (XState's `ActorRef`, the parts used). */
export interface InspectableActorRef {
	readonly id: string;
	readonly sessionId: string;
	getSnapshot(): unknown;
	readonly system: ActorSystemLike;
	readonly src?: unknown;
	readonly logic?: unknown;
	readonly _parent?: InspectableActorRef | undefined;
}

/** The actor system of an actor: where inspection observers are registered. */
export interface ActorSystemLike {
	inspect(observer: ((event: ActorInspectionEvent) => void) | { next?: (event: ActorInspectionEvent) => void }): SubscriptionLike;
}

/** An event object as XState delivers it: a `type` and any payload. */
export interface EventObjectLike {
	type: string;
}

/**
 * The actor an inspection event is about. XState types it this narrowly (`ActorRefLike`);
 * at run time it is the full actor, which the inspector reads as an {@link InspectableActorRef}.
 */
export interface InspectedActorLike {
	readonly sessionId: string;
	getSnapshot(): unknown;
}

/**
 * An XState inspection event (`actor.system.inspect`), the fields agentchart reads. One open
 * shape rather than XState's union, so every kind XState reports (including kinds added in
 * later versions) fits; readers check `type` and the fields they need.
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

/** A transition of a state node, as a machine definition holds it. */
export interface TransitionDefinitionLike {
	readonly target?: readonly StateNodeLike[] | undefined;
	readonly guard?: unknown;
}

/** A state node of a machine definition (XState's `StateNode`, the parts read). */
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

/** A machine definition (XState's `StateMachine`, the parts read). */
export interface StateMachineLike {
	readonly id: string;
	readonly root: StateNodeLike;
}
