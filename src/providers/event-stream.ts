import type { AssistantMessage } from "../types/messages.js";
import type { AssistantMessageEvent } from "../types/stream.js";

interface Waiter<T> {
	resolve: (result: IteratorResult<T>) => void;
}

/**
 * A single-consumer async queue of events that ends with a result. Providers push events as
 * they arrive; the consumer iterates with `for await` and reads the final result with
 * `result()`.
 *
 * As pi-ai's, `end()` without a result after no terminal event ends the iteration but leaves
 * `result()` unsettled: a producer that can fail settles it itself (the loop API's stream gives
 * its run's outcome, a stream function always ends with `done` or `error`).
 *
 * @example
 * const stream = new EventStream<number, string>((n) => n < 0, (n) => `ended with ${n}`);
 * stream.push(1); stream.push(-1);
 * for await (const n of stream) console.log(n); // 1, -1
 * console.log(await stream.result()); // "ended with -1"
 */
export class EventStream<T, R = T> implements AsyncIterable<T> {
	private readonly queue: T[] = [];
	private head = 0;
	private readonly waiters: Waiter<T>[] = [];
	private finished = false;
	private readonly resultPromise: Promise<R>;
	private resolveResult!: (result: R) => void;

	constructor(
		private readonly isComplete: (event: T) => boolean,
		private readonly extractResult: (event: T) => R,
	) {
		this.resultPromise = new Promise<R>((resolve) => {
			this.resolveResult = resolve;
		});
	}

	/** Adds an event. A terminal event (per `isComplete`) ends the stream; later pushes are ignored. */
	push(event: T): void {
		if (this.finished) return;
		if (this.isComplete(event)) {
			this.finished = true;
			this.resolveResult(this.extractResult(event));
		}
		const waiter = this.waiters.shift();
		if (waiter) waiter.resolve({ value: event, done: false });
		else this.queue.push(event);
		if (this.finished) this.releaseWaiters();
	}

	/** Ends the stream, optionally with a result, releasing any waiting consumer. */
	end(result?: R): void {
		if (!this.finished) {
			this.finished = true;
			if (result !== undefined) this.resolveResult(result);
		}
		this.releaseWaiters();
	}

	/** True once a terminal event was pushed or `end()` was called. */
	get isDone(): boolean {
		return this.finished;
	}

	/** Resolves with the result of the terminal event (or the one given to `end`). */
	result(): Promise<R> {
		return this.resultPromise;
	}

	async *[Symbol.asyncIterator](): AsyncIterator<T> {
		while (true) {
			if (this.head < this.queue.length) {
				const event = this.queue[this.head] as T;
				this.queue[this.head] = undefined as T;
				this.head++;
				// Compact the backing array now and then so a long stream does not keep every event alive.
				if (this.head > 1024 && this.head * 2 > this.queue.length) {
					this.queue.splice(0, this.head);
					this.head = 0;
				}
				yield event;
				continue;
			}
			if (this.finished) return;
			const next = await new Promise<IteratorResult<T>>((resolve) => this.waiters.push({ resolve }));
			if (next.done) return;
			yield next.value;
		}
	}

	private releaseWaiters(): void {
		while (this.waiters.length > 0) this.waiters.shift()?.resolve({ value: undefined, done: true });
	}
}

/**
 * The stream of one LLM call: {@link AssistantMessageEvent}s ending with `done` or `error`,
 * whose payload is the result.
 *
 * @example
 * const stream = new AssistantMessageEventStream();
 * stream.push({ type: "done", reason: "stop", message });
 * await stream.result(); // message
 */
export class AssistantMessageEventStream extends EventStream<AssistantMessageEvent, AssistantMessage> {
	constructor() {
		super(
			(event) => event.type === "done" || event.type === "error",
			(event) => {
				if (event.type === "done") return event.message;
				if (event.type === "error") return event.error;
				throw new Error(`Not a terminal event: ${event.type}`);
			},
		);
	}
}

/**
 * Creates an {@link AssistantMessageEventStream}, for providers.
 *
 * @example
 * const stream = createAssistantMessageEventStream();
 */
export function createAssistantMessageEventStream(): AssistantMessageEventStream {
	return new AssistantMessageEventStream();
}
