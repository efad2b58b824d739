/**
 * The replay cursor and its controls: a seek bar over every record the page holds, steps from
 * one shown log row to the next (or back), play at the recording's own pace (faster or slower),
 * pausing on a chosen event type. Live, the cursor follows the newest record until the reader
 * moves it; "Live" goes back to following.
 */
import type { InspectionRecord } from "../../src/inspect/records.js";
import { formatOffset } from "../model/format.js";
import type { RecordStore } from "../model/record-store.js";
import { iconButton } from "./icons.js";

/** The controls' elements in index.html. */
export interface PlayerElements {
	start: HTMLButtonElement;
	back: HTMLButtonElement;
	play: HTMLButtonElement;
	forward: HTMLButtonElement;
	end: HTMLButtonElement;
	seek: HTMLInputElement;
	position: HTMLElement;
	speed: HTMLSelectElement;
	pauseOn: HTMLSelectElement;
}

/** What the player needs to know about records. */
export interface PlayerHooks {
	/** Whether a step stops at this record (the log shows it). */
	isStep(record: InspectionRecord): boolean;
	/** The event type a record is listed under (for "pause on"), if listed. */
	typeOf(record: InspectionRecord): string | undefined;
	/** The cursor moved; `live` when it follows the newest record. */
	onCursor(cursor: number, live: boolean): void;
}

/** Longest pause between two records in play: an idle minute is not replayed as a minute. */
const MAX_GAP_MS = 800;

export class Player {
	private position = 0;
	private following = true;
	private playing = false;
	private timer: number | undefined;
	private readonly types = new Set<string>();

	constructor(
		private readonly elements: PlayerElements,
		private readonly store: RecordStore,
		private readonly mode: "live" | "replay",
		private readonly hooks: PlayerHooks,
	) {
		// A replay opens at its end (the whole run shown), as a live page does.
		this.following = true;
		iconButton(elements.start, "start", "Start", false).addEventListener("click", () => this.seek(this.store.start));
		iconButton(elements.back, "back", "Step back (,)", false).addEventListener("click", () => this.step(-1));
		elements.play.addEventListener("click", () => this.toggle());
		iconButton(elements.forward, "forward", "Step forward (.)", false).addEventListener("click", () => this.step(1));
		iconButton(elements.end, mode === "live" ? "live" : "end", mode === "live" ? "Live" : "End", mode === "live").addEventListener("click", () => this.toEnd());
		elements.seek.addEventListener("input", () => this.seek(Number(elements.seek.value)));
		document.addEventListener("keydown", (event) => {
			const target = event.target as HTMLElement;
			if (target.closest("input, select, textarea, button, [role=button], details > summary")) return;
			if (event.key === " " || event.key === "k") this.toggle();
			else if (event.key === ".") this.step(1);
			else if (event.key === ",") this.step(-1);
			else return;
			event.preventDefault();
		});
		this.show();
	}

	/** The cursor: how many records are applied. */
	get cursor(): number {
		return this.position;
	}

	/** Whether the cursor follows the newest record. */
	get live(): boolean {
		return this.following;
	}

	/** New records arrived (or the store was reset). */
	recordsAdded(records: readonly InspectionRecord[]): void {
		for (const record of records) {
			const type = this.hooks.typeOf(record);
			if (type !== undefined && !this.types.has(type)) {
				this.types.add(type);
				this.elements.pauseOn.append(new Option(type, type));
			}
		}
		if (this.following) this.position = this.store.end;
		this.position = Math.max(this.position, this.store.start);
		this.show();
		this.hooks.onCursor(this.position, this.following);
	}

	/** Moves the cursor (clamped); leaves following, unless it lands on the end while live. */
	seek(position: number): void {
		this.position = Math.min(this.store.end, Math.max(this.store.start, Math.round(position)));
		this.following = this.mode === "live" && this.position === this.store.end && this.following;
		this.stop();
		this.show();
		this.hooks.onCursor(this.position, this.following);
	}

	/** The position of the first record at or after time `t`. */
	positionAt(t: number): number {
		const found = this.store.find(this.store.start, 1, (record) => record.t >= t);
		return found === undefined ? this.store.end : found;
	}

	/** One shown record forward or back. */
	step(direction: 1 | -1): void {
		const next = this.store.find(this.position, direction, (record) => this.hooks.isStep(record));
		this.seek(next ?? (direction === 1 ? this.store.end : this.store.start));
	}

	private toEnd(): void {
		this.stop();
		this.position = this.store.end;
		this.following = this.mode === "live";
		this.show();
		this.hooks.onCursor(this.position, this.following);
	}

	private toggle(): void {
		if (this.playing) {
			this.stop();
			this.show();
			return;
		}
		if (this.position >= this.store.end) this.position = this.store.start;
		this.playing = true;
		this.following = false;
		this.show();
		this.schedule();
	}

	private stop(): void {
		this.playing = false;
		if (this.timer !== undefined) window.clearTimeout(this.timer);
		this.timer = undefined;
	}

	private schedule(): void {
		if (!this.playing) return;
		const current = this.store.at(this.position - 1);
		const next = this.store.at(this.position);
		if (!next) {
			this.stop();
			if (this.mode === "live") this.following = true;
			this.show();
			this.hooks.onCursor(this.position, this.following);
			return;
		}
		const gap = current ? Math.min(MAX_GAP_MS, Math.max(0, next.t - current.t)) : 0;
		this.timer = window.setTimeout(() => {
			this.position++;
			const type = this.hooks.typeOf(next);
			if (this.elements.pauseOn.value !== "" && type === this.elements.pauseOn.value) this.stop();
			this.show();
			this.hooks.onCursor(this.position, false);
			this.schedule();
		}, gap / Number(this.elements.speed.value || "1"));
	}

	private show(): void {
		const { seek, position, play } = this.elements;
		seek.min = String(this.store.start);
		seek.max = String(this.store.end);
		seek.value = String(this.position);
		const record = this.store.at(this.position - 1);
		const origin = this.store.origin;
		const time = record && origin !== undefined ? ` · ${formatOffset(record.t - origin)}` : "";
		position.textContent = `${this.position} / ${this.store.end}${time}`;
		iconButton(play, this.playing ? "pause" : "play", this.playing ? "Pause" : "Play");
		play.title = `${this.playing ? "Pause" : "Play"} (space)`;
		document.body.dataset["cursor"] = String(this.position);
		document.body.dataset["following"] = String(this.following);
		document.body.dataset["playing"] = String(this.playing);
	}
}
