/**
 * A bounded FIFO that overwrites its oldest entry when full. Push and shift are O(1), which is
 * what an inspector on the hot path needs: a burst of events costs the same per event however
 * long the run is. Its array grows to the largest burst held (at most `capacity`) instead of
 * being made at full size: an inspector's default capacity is 20,000 slots (160 KB), which a
 * run of a few dozen events would otherwise allocate, and the garbage collector scan, for each
 * inspector made.
 *
 * @example
 * const buffer = new RingBuffer<number>(2);
 * buffer.push(1); buffer.push(2); buffer.push(3); // 1 is overwritten
 * buffer.dropped; // 1
 * buffer.drain(); // [2, 3]
 */
export class RingBuffer<T> {
	private readonly items: (T | undefined)[];
	private head = 0;
	private count = 0;
	/** Entries overwritten before they were read, since construction. */
	dropped = 0;

	constructor(readonly capacity: number) {
		if (!Number.isInteger(capacity) || capacity < 1) throw new RangeError(`RingBuffer capacity must be a positive integer, got ${capacity}`);
		this.items = [];
	}

	/** Entries currently held. */
	get size(): number {
		return this.count;
	}

	/**
	 * Appends, overwriting the oldest entry when full, and returns the entry it overwrote
	 * (undefined when it overwrote none), for a caller that must keep some entries whatever else
	 * a burst drops.
	 */
	push(item: T): T | undefined {
		const index = (this.head + this.count) % this.capacity;
		// The entries are the slots from `head` on, so `index` is at most one past the array's
		// end, where the assignment appends.
		const overwritten = this.count < this.capacity ? undefined : this.items[index];
		this.items[index] = item;
		if (this.count < this.capacity) {
			this.count++;
		} else {
			this.head = (this.head + 1) % this.capacity;
			this.dropped++;
		}
		return overwritten;
	}

	/** Removes and returns the oldest entry. */
	shift(): T | undefined {
		if (this.count === 0) return undefined;
		const item = this.items[this.head];
		this.items[this.head] = undefined;
		this.count--;
		// Emptied: start again at the first slot, so the array grows only while entries are held.
		this.head = this.count === 0 ? 0 : (this.head + 1) % this.capacity;
		return item;
	}

	/** Removes and returns every entry, oldest first. */
	drain(): T[] {
		const out: T[] = [];
		// By count, not until an entry is undefined: a buffer of `T | undefined` may hold one.
		while (this.count > 0) out.push(this.shift() as T);
		return out;
	}

	/** The entries, oldest first, without removing them. */
	toArray(): T[] {
		const out: T[] = [];
		for (let i = 0; i < this.count; i++) out.push(this.items[(this.head + i) % this.capacity] as T);
		return out;
	}
}

/**
 * About how many bytes `value` takes as JSON (strings by their length, numbers as 8): enough to
 * bound a history in bytes without serialising each record. Records are previews, bounded by
 * their payload limits, so the walk is too.
 *
 * @example
 * approximateJsonBytes({ text: "hello" }); // 17
 */
export function approximateJsonBytes(value: unknown, depth = 0): number {
	if (typeof value === "string") return value.length + 2;
	// Records are JSON-safe previews; the depth cap only keeps a stray cycle from recursing for ever.
	if (typeof value !== "object" || value === null || depth > 32) return 8;
	let bytes = 2;
	if (Array.isArray(value)) {
		for (const item of value) bytes += approximateJsonBytes(item, depth + 1) + 1;
		return bytes;
	}
	for (const key in value) bytes += key.length + 4 + approximateJsonBytes((value as Record<string, unknown>)[key], depth + 1);
	return bytes;
}

/**
 * A FIFO bounded both in entries and in bytes (each entry weighed once, as it comes): the
 * oldest entries go once either bound is passed, but the newest always stays.
 *
 * @example
 * const log = new BoundedLog<string>(100, 1024, (text) => text.length);
 * log.push("x".repeat(800)); log.push("y".repeat(800)); // the first is dropped
 * log.toArray().length; // 1
 */
export class BoundedLog<T> {
	private readonly entries: RingBuffer<{ entry: T; weight: number }>;
	private total = 0;

	constructor(
		maxEntries: number,
		readonly maxBytes: number,
		private readonly weigh: (entry: T) => number,
	) {
		if (!(maxBytes > 0)) throw new RangeError(`BoundedLog maxBytes must be a positive number, got ${maxBytes}`);
		this.entries = new RingBuffer(maxEntries);
	}

	/** Bytes held (as weighed). */
	get bytes(): number {
		return this.total;
	}

	/** Appends, dropping the oldest entries while either bound is passed. */
	push(entry: T): void {
		const weight = this.weigh(entry);
		// Dropped here rather than overwritten by the ring, so that its weight leaves the total.
		if (this.entries.size === this.entries.capacity) this.#dropOldest();
		this.entries.push({ entry, weight });
		this.total += weight;
		while (this.total > this.maxBytes && this.entries.size > 1) this.#dropOldest();
	}

	/** The entries, oldest first. */
	toArray(): T[] {
		return this.entries.toArray().map((held) => held.entry);
	}

	#dropOldest(): void {
		this.total -= this.entries.shift()?.weight ?? 0;
	}
}
