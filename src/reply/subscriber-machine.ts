/**
 * The lifecycle of a reply subscription as a statechart.
 *
 * ```
 * subscribed (parallel)                       unsubscribed (final)
 *   message:    idle → streaming → ended        ← "unsubscribe" from anywhere
 *   compaction: idle → inFlight → awaitingRetry(n) → idle
 * ```
 *
 * A compaction that will retry leaves a pending retry behind; each `agent_end` settles one.
 * `waitForCompactionRetry()` resolves when the compaction region is back in `idle`, and is
 * rejected when the subscription reaches `unsubscribed`, so "unsubscribe while a retry is
 * pending" is one transition, not a flag race.
 */
import { assign, setup, type SnapshotFrom } from "xstate";

/**
 * Events the subscriber feeds into its lifecycle machine.
 *
 * @example
 * const event: SubscriberLifecycleEvent = { type: "compaction.end", willRetry: true, completed: true };
 */
export type SubscriberLifecycleEvent =
	| { type: "message.start" }
	| { type: "message.end" }
	| { type: "compaction.start" }
	| { type: "compaction.end"; willRetry: boolean; completed: boolean }
	| { type: "agent.end" }
	| { type: "unsubscribe" };

/**
 * Context of the lifecycle machine.
 *
 * @example
 * const retries = (context: SubscriberLifecycleContext) => context.pendingRetries;
 */
export interface SubscriberLifecycleContext {
	/** Retries announced by `auto_compaction_end { willRetry }` and not yet settled by `agent_end`. */
	pendingRetries: number;
	/** Compactions that produced a result. */
	compactionCount: number;
	/** Assistant messages started so far. */
	assistantMessageIndex: number;
}

/**
 * The reply subscriber's lifecycle machine.
 *
 * @example
 * import { createActor } from "xstate";
 * const lifecycle = createActor(replySubscriberMachine).start();
 * lifecycle.send({ type: "compaction.end", willRetry: true, completed: true });
 * lifecycle.getSnapshot().matches({ subscribed: { compaction: "awaitingRetry" } }); // true
 */
export const replySubscriberMachine = setup({
	types: {} as { context: SubscriberLifecycleContext; events: SubscriberLifecycleEvent },
	guards: {
		willRetry: ({ event }) => event.type === "compaction.end" && event.willRetry,
		hasPendingRetries: ({ context }) => context.pendingRetries > 0,
		hasOtherPendingRetries: ({ context }) => context.pendingRetries > 1,
	},
	actions: {
		countMessage: assign({ assistantMessageIndex: ({ context }) => context.assistantMessageIndex + 1 }),
		countCompaction: assign({
			compactionCount: ({ context, event }) =>
				event.type === "compaction.end" && event.completed ? context.compactionCount + 1 : context.compactionCount,
		}),
		addPendingRetry: assign({ pendingRetries: ({ context }) => context.pendingRetries + 1 }),
		settlePendingRetry: assign({ pendingRetries: ({ context }) => Math.max(0, context.pendingRetries - 1) }),
	},
}).createMachine({
	id: "replySubscriber",
	context: { pendingRetries: 0, compactionCount: 0, assistantMessageIndex: 0 },
	initial: "subscribed",
	states: {
		subscribed: {
			type: "parallel",
			on: { unsubscribe: "unsubscribed" },
			states: {
				message: {
					initial: "idle",
					on: { "message.start": { target: ".streaming", reenter: true, actions: "countMessage" } },
					states: {
						idle: {},
						streaming: { on: { "message.end": "ended" } },
						ended: {},
					},
				},
				compaction: {
					initial: "idle",
					on: {
						"compaction.end": [
							{ guard: "willRetry", target: ".awaitingRetry", actions: ["countCompaction", "addPendingRetry"] },
							{ guard: "hasPendingRetries", target: ".awaitingRetry", actions: "countCompaction" },
							{ target: ".idle", actions: "countCompaction" },
						],
					},
					states: {
						idle: { on: { "compaction.start": "inFlight" } },
						inFlight: {},
						awaitingRetry: {
							on: {
								"compaction.start": "inFlight",
								"agent.end": [
									{ guard: "hasOtherPendingRetries", target: "awaitingRetry", actions: "settlePendingRetry" },
									{ target: "idle", actions: "settlePendingRetry" },
								],
							},
						},
					},
				},
			},
		},
		unsubscribed: { type: "final" },
	},
});

/** A snapshot of {@link replySubscriberMachine}. */
export type SubscriberLifecycleSnapshot = SnapshotFrom<typeof replySubscriberMachine>;

/**
 * True while a compaction runs or a retry it announced is still pending.
 *
 * @example
 * isCompactingSnapshot(lifecycle.getSnapshot()); // false when idle
 */
export function isCompactingSnapshot(snapshot: SubscriberLifecycleSnapshot): boolean {
	return (
		snapshot.matches({ subscribed: { compaction: "inFlight" } }) ||
		snapshot.matches({ subscribed: { compaction: "awaitingRetry" } })
	);
}

/**
 * True while a compaction runs.
 *
 * @example
 * isCompactionInFlightSnapshot(lifecycle.getSnapshot()); // true between start and end
 */
export function isCompactionInFlightSnapshot(snapshot: SubscriberLifecycleSnapshot): boolean {
	return snapshot.matches({ subscribed: { compaction: "inFlight" } });
}
