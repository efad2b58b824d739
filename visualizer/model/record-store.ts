/**
 * Every record the page has, and the model at any position among them: what replay's seek bar,
 * its steps and the live view read. Positions are absolute ("records applied since the
 * first"), so they stay valid when old records are let go.
 *
 * Memory stays bounded over a long session: beyond `capacity` records, the oldest are folded
 * into a base model (applied, then dropped), and the page can seek back only as far as the
 * records it still holds. Seeking back starts from the nearest saved copy of the model.
 */
import type { InspectionRecord } from "../../src/inspect/records.js";
import type { ChartIndex } from "./chart-index.js";
import { applyRecord, createRunModel } from "./run-model.js";
import type { RunModel } from "./types.js";

/** A copy of the model is saved every this many records, so a seek back replays at most that many. */
const CHECKPOINT_EVERY = 1000;

export class RecordStore {
	private records: InspectionRecord[] = [];
	/** Absolute position of `records[0]`. */
	private offset = 0;
	/** The model after the records before `offset`. */
	private base: RunModel;
	/** Copies of the model at absolute positions (multiples of CHECKPOINT_EVERY). */
	private checkpoints = new Map<number, RunModel>();
	private current: { position: number; model: RunModel };
	/** Time of the first record ever pushed (kept when old records go). */
	private firstT: number | undefined;
	/** Runs (agent_start … agent_end) over every record pushed, for the timeline's extent. */
	private runSpans: { startT: number; endT?: number | undefined }[] = [];
	private newestT: number | undefined;

	constructor(
		private readonly chart: ChartIndex,
		private readonly capacity = 20_000,
	) {
		this.base = createRunModel(chart.graph.machineId);
		this.current = { position: 0, model: structuredClone(this.base) };
	}

	/** Time of the first record: where the page's relative times count from. */
	get origin(): number | undefined {
		return this.firstT;
	}

	/** The newest record's time. */
	get lastT(): number | undefined {
		return this.newestT;
	}

	/**
	 * When each run started and ended, from every record pushed: the timeline shows a whole
	 * run at its true length wherever the cursor is in it.
	 */
	get runs(): readonly { startT: number; endT?: number | undefined }[] {
		return this.runSpans;
	}

	/** The first position the store can show (0 until old records were let go). */
	get start(): number {
		return this.offset;
	}

	/** The position after the last record. */
	get end(): number {
		return this.offset + this.records.length;
	}

	/** The record at an absolute position (the one applied to reach `position + 1`). */
	at(position: number): InspectionRecord | undefined {
		return this.records[position - this.offset];
	}

	/** Records in `[from, to)`, clamped to what is held. */
	slice(from: number, to: number): InspectionRecord[] {
		return this.records.slice(Math.max(0, from - this.offset), Math.max(0, to - this.offset));
	}

	/** Adds records at the end; lets the oldest go beyond the capacity. */
	push(records: readonly InspectionRecord[]): void {
		for (const record of records) {
			this.records.push(record);
			this.newestT = Math.max(this.newestT ?? record.t, record.t);
			if (record.type !== "@agentchart.emitted") continue;
			if (record.event.type === "agent_start") this.runSpans.push({ startT: record.t });
			else if (record.event.type === "agent_end") {
				const run = this.runSpans[this.runSpans.length - 1];
				if (run && run.endT === undefined) run.endT = record.t;
			}
		}
		if (this.runSpans.length > 5000) this.runSpans.splice(0, this.runSpans.length - 5000);
		this.firstT ??= records[0]?.t;
		const excess = this.records.length - this.capacity;
		if (excess <= 0) return;
		// Fold in chunks, not one by one: each fold moves the array.
		const fold = Math.max(excess, Math.floor(this.capacity / 10));
		for (const record of this.records.slice(0, fold)) applyRecord(this.base, record, this.chart);
		this.records.splice(0, fold);
		this.offset += fold;
		for (const position of this.checkpoints.keys()) if (position < this.offset) this.checkpoints.delete(position);
		if (this.current.position < this.offset) this.current = { position: this.offset, model: structuredClone(this.base) };
	}

	/** Forgets everything (a live page reconnecting gets the history again). */
	clear(): void {
		this.records = [];
		this.firstT = undefined;
		this.newestT = undefined;
		this.runSpans = [];
		this.offset = 0;
		this.base = createRunModel(this.chart.graph.machineId);
		this.checkpoints.clear();
		this.current = { position: 0, model: structuredClone(this.base) };
	}

	/**
	 * The model after the records before `position` (clamped to what is held). Moving forward
	 * applies only the new records; moving back starts again from the nearest saved copy.
	 * The model returned is the store's own: read it, do not change it.
	 */
	modelAt(position: number): RunModel {
		const target = Math.min(this.end, Math.max(this.offset, position));
		if (target < this.current.position) {
			let from = this.offset;
			let model = this.base;
			for (const [at, copy] of this.checkpoints) {
				if (at <= target && at > from) {
					from = at;
					model = copy;
				}
			}
			this.current = { position: from, model: structuredClone(model) };
		}
		const { model } = this.current;
		for (let at = this.current.position; at < target; at++) {
			const record = this.records[at - this.offset];
			if (record) applyRecord(model, record, this.chart);
			if ((at + 1) % CHECKPOINT_EVERY === 0 && !this.checkpoints.has(at + 1)) this.checkpoints.set(at + 1, structuredClone(model));
		}
		this.current.position = target;
		return model;
	}

	/**
	 * The first position after `from` (searching forward, or backward with `direction` -1)
	 * whose record passes `test`; undefined when there is none.
	 */
	find(from: number, direction: 1 | -1, test: (record: InspectionRecord) => boolean): number | undefined {
		for (let at = direction === 1 ? from : from - 2; at >= this.offset && at < this.end; at += direction) {
			const record = this.records[at - this.offset];
			if (record && test(record)) return at + 1;
		}
		return undefined;
	}
}
