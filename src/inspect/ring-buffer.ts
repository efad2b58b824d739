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

	/** Appends, overwriting the oldest entry when full. */
	push(item: T): void {
		const index = (this.head + this.count) % this.capacity;
		// The entries are the slots from `head` on, so `index` is at most one past the array's
		// end, where the assignment appends.
		this.items[index] = item;
		if (this.count < this.capacity) {
			this.count++;
		} else {
			this.head = (this.head + 1) % this.capacity;
			this.dropped++;
		}
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
		for (let item = this.shift(); item !== undefined; item = this.shift()) out.push(item);
		return out;
	}

	/** The entries, oldest first, without removing them. */
	toArray(): T[] {
		const out: T[] = [];
		for (let i = 0; i < this.count; i++) out.push(this.items[(this.head + i) % this.capacity] as T);
		return out;
	}
}
