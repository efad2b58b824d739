/**
 * Tool-call ids counted, not collected in a set: a model may give two calls of one reply the
 * same id, and each is a call of its own (it starts, ends and is answered once). The checkers
 * of events and transcripts (src/testing/event-invariants.ts, transcript-checks.ts) count with it.
 */
import type { AgentMessage, AssistantMessage } from "../types/messages.js";

/** A multiset of ids; an id whose count falls to 0 is gone. */
export class Counts {
	readonly #counts = new Map<string, number>();
	get(id: string): number {
		return this.#counts.get(id) ?? 0;
	}
	add(id: string, by = 1): void {
		const next = this.get(id) + by;
		if (next > 0) this.#counts.set(id, next);
		else this.#counts.delete(id);
	}
	get size(): number {
		return this.#counts.size;
	}
	keys(): string[] {
		return [...this.#counts.keys()];
	}
	clear(): void {
		this.#counts.clear();
	}
}

/** The ids of an assistant message's tool calls, in order (none for any other message). */
export function toolCallIdsOf(message: AgentMessage): string[] {
	if ((message as { role?: string } | undefined)?.role !== "assistant") return [];
	return ((message as AssistantMessage).content ?? []).flatMap((block) => (block.type === "toolCall" ? [block.id] : []));
}

/** The ids counted. */
export function countsOf(ids: readonly string[]): Counts {
	const counts = new Counts();
	for (const id of ids) counts.add(id);
	return counts;
}
