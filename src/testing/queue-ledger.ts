/**
 * Exactly-once delivery of steering and follow-up messages, across restores: a message is told
 * by its content and timestamp (a restored agent's queue holds copies, not the same objects).
 */
import type { AgentEvent } from "../types/agent.js";
import type { AgentMessage } from "../types/messages.js";
import { type AgentViolation, violation } from "./violations.js";

/**
 * Which queue a message went to.
 *
 * @example
 * const steered = recording.queued.filter((entry) => entry.kind === ("steer" satisfies QueueKind)).map((entry) => entry.message);
 */
export type QueueKind = "steer" | "followUp";

/** The queues as they are now. */
export interface QueueContents {
	steering: readonly AgentMessage[];
	followUps: readonly AgentMessage[];
}

function keyOf(message: AgentMessage): string {
	const { role, content, timestamp } = message as { role?: string; content?: unknown; timestamp?: unknown };
	return JSON.stringify([role, content, timestamp]);
}

function labelOf(message: AgentMessage): string {
	const content = (message as { content?: unknown }).content;
	const text = typeof content === "string" ? content : Array.isArray(content) ? ((content[0] as { text?: string } | undefined)?.text ?? "?") : "?";
	return JSON.stringify(text.length > 40 ? `${text.slice(0, 40)}…` : text);
}

interface Tracked {
	message: AgentMessage;
	key: string;
	kind: QueueKind;
	/** The queues were cleared (or the agent reset) after it was queued: it may be gone undelivered. */
	mayBeDropped: boolean;
}

/**
 * Records what was queued (`track`) and what was delivered (`onEvent`: its `message_end`), then
 * says what went wrong: a message delivered twice, queued twice, delivered and still queued, or
 * neither (lost). Messages with the same content and timestamp count as one kind, several times.
 *
 * @example
 * const ledger = new QueueLedger();
 * agent.subscribe((event) => ledger.onEvent(event));
 * ledger.track(message, "steer"); agent.steer(message);
 * await agent.waitForIdle();
 * expect(ledger.violations(agent.actor.getSnapshot().context)).toEqual([]);
 */
export class QueueLedger {
	private readonly tracked: Tracked[] = [];
	private readonly delivered = new Map<string, number>();

	/** A message was given to `steer` or `followUp`. */
	track(message: AgentMessage, kind: QueueKind): void {
		this.tracked.push({ message, key: keyOf(message), kind, mayBeDropped: false });
	}

	/**
	 * The queues were cleared (or reset): messages tracked so far may be gone without being
	 * delivered (one the run had already taken is still delivered, once). `kinds`: the queues
	 * that were cleared (default both).
	 */
	cleared(kinds: readonly QueueKind[] = ["steer", "followUp"]): void {
		for (const entry of this.tracked) if (kinds.includes(entry.kind)) entry.mayBeDropped = true;
	}

	/** Counts deliveries: call it with every event. */
	onEvent(event: AgentEvent): void {
		if (event.type !== "message_end") return;
		const key = keyOf(event.message);
		if (!this.tracked.some((entry) => entry.key === key)) return;
		this.delivered.set(key, (this.delivered.get(key) ?? 0) + 1);
	}

	/** What went wrong so far, given the queues as they are now. */
	violations(queues: QueueContents): AgentViolation[] {
		const out: AgentViolation[] = [];
		const seen = new Set<string>();
		for (const entry of this.tracked) {
			if (seen.has(entry.key)) continue;
			seen.add(entry.key);
			const same = this.tracked.filter((other) => other.key === entry.key);
			const sent = same.length;
			const droppable = same.filter((other) => other.mayBeDropped).length;
			const label = `${entry.kind} ${labelOf(entry.message)}`;
			const delivered = this.delivered.get(entry.key) ?? 0;
			const queue = entry.kind === "steer" ? queues.steering : queues.followUps;
			const queued = queue.filter((message) => keyOf(message) === entry.key).length;
			if (delivered > sent) out.push(violation("queue", `${label} delivered ${delivered} times (queued ${sent})`));
			else if (queued > sent) out.push(violation("queue", `${label} queued ${queued} times (given ${sent})`));
			else if (delivered + queued > sent) out.push(violation("queue", `${label} delivered and still queued`));
			if (delivered + queued < sent - droppable) out.push(violation("queue", `${label} lost (given ${sent}, delivered ${delivered}, still queued ${queued})`));
		}
		return out;
	}
}
