import type { AgentStore } from "../../src/durable/store.js";

/**
 * `inner`, its writes landing a moment after they are handed over (as on a disk): what a caller
 * awaits then decides what the store holds when the process stops.
 *
 * @example
 * const inner = createMemoryStore();
 * const agent = new Agent({ store: lateStore(inner), sessionId: "s", streamFn });
 */
export function lateStore(inner: AgentStore): AgentStore {
	const later = () => new Promise((resolve) => setImmediate(resolve));
	return {
		load: (id, options) => inner.load(id, options),
		saveSnapshot: async (id, snapshot) => {
			await later();
			await inner.saveSnapshot(id, snapshot);
		},
		appendJournal: async (id, entry) => {
			await later();
			await inner.appendJournal(id, entry);
		},
	};
}
