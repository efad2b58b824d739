/**
 * Token totals over assistant messages, committed once per message: a provider (or a replayed
 * event) that repeats `message_end` must not be billed twice.
 */
// @ts-nocheck

import type { Usage } from "../types/index.js";
import type { UsageTotals } from "./types.js";

/**
 * Accumulates usage per assistant message.
 *
 * @example
 * const totals = new UsageAccumulator();
 * totals.commit(message.usage, message); // counted
 * totals.commit(message.usage, message); // same message: ignored
 * totals.totals; // { input, output, cacheRead, cacheWrite, total }
 */
export class UsageAccumulator {
	readonly #counted = new WeakSet<object>();
	#totals: UsageTotals = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 };

	/** Adds a message's usage unless that message was already counted. */
	commit(usage: Partial<Usage> | undefined, message: object): void {
		if (this.#counted.has(message)) return;
		this.#counted.add(message);
		if (!usage) return;
		const input = finite(usage.input);
		const output = finite(usage.output);
		const cacheRead = finite(usage.cacheRead);
		const cacheWrite = finite(usage.cacheWrite);
		const derived = input + output + cacheRead + cacheWrite;
		const total = finite(usage.totalTokens) || derived;
		if (total === 0) return;
		this.#totals = {
			input: this.#totals.input + input,
			output: this.#totals.output + output,
			cacheRead: this.#totals.cacheRead + cacheRead,
			cacheWrite: this.#totals.cacheWrite + cacheWrite,
			total: this.#totals.total + total,
		};
	}

	/** The totals, or `undefined` while nothing was counted. */
	get totals(): UsageTotals | undefined {
		return this.#totals.total === 0 ? undefined : { ...this.#totals };
	}
}

function finite(value: number | undefined): number {
	return typeof value === "number" && Number.isFinite(value) && value > 0 ? value : 0;
}
