// @ts-nocheck
import { describe, expect, it } from "vitest";
import { createActor } from "xstate";
import {
	isCompactingSnapshot,
	isCompactionInFlightSnapshot,
	replySubscriberMachine,
} from "../../src/reply/subscriber-machine.js";

function start() {
	return createActor(replySubscriberMachine).start();
}

describe("replySubscriberMachine", () => {
	it("walks a compaction with two announced retries back to idle after two agent_ends", () => {
		const actor = start();
		actor.send({ type: "compaction.start" });
		expect(isCompactionInFlightSnapshot(actor.getSnapshot())).toBe(true);
		actor.send({ type: "compaction.end", willRetry: true, completed: true });
		actor.send({ type: "compaction.start" });
		actor.send({ type: "compaction.end", willRetry: true, completed: true });
		expect(actor.getSnapshot().context).toMatchObject({ pendingRetries: 2, compactionCount: 2 });
		actor.send({ type: "agent.end" });
		expect(actor.getSnapshot().matches({ subscribed: { compaction: "awaitingRetry" } })).toBe(true);
		actor.send({ type: "agent.end" });
		expect(actor.getSnapshot().matches({ subscribed: { compaction: "idle" } })).toBe(true);
		expect(isCompactingSnapshot(actor.getSnapshot())).toBe(false);
	});

	it("keeps a pending retry when a later compaction ends without one", () => {
		const actor = start();
		actor.send({ type: "compaction.end", willRetry: true, completed: false });
		actor.send({ type: "compaction.start" });
		actor.send({ type: "compaction.end", willRetry: false, completed: true });
		expect(actor.getSnapshot().matches({ subscribed: { compaction: "awaitingRetry" } })).toBe(true);
	});

	it("ignores agent_end while a compaction is in flight", () => {
		const actor = start();
		actor.send({ type: "compaction.start" });
		actor.send({ type: "agent.end" });
		expect(isCompactionInFlightSnapshot(actor.getSnapshot())).toBe(true);
	});

	it("counts assistant messages and tracks the message phase", () => {
		const actor = start();
		actor.send({ type: "message.start" });
		expect(actor.getSnapshot().matches({ subscribed: { message: "streaming" } })).toBe(true);
		actor.send({ type: "message.end" });
		actor.send({ type: "message.start" });
		expect(actor.getSnapshot().context.assistantMessageIndex).toBe(2);
	});

	it("ends in unsubscribed from any state and then ignores everything", () => {
		const actor = start();
		actor.send({ type: "compaction.end", willRetry: true, completed: true });
		actor.send({ type: "unsubscribe" });
		expect(actor.getSnapshot().status).toBe("done");
		actor.send({ type: "agent.end" });
		expect(actor.getSnapshot().value).toBe("unsubscribed");
	});
});
