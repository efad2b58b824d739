/**
 * The timeline: a bar per run, turn, model call (its wait for the first token lighter), tool
 * call, approval wait and compaction, over time, so a tool running while the reply still
 * streams, and where a run's time went, can be seen. It shows the run at the replay cursor (or
 * the whole session); a click on a bar selects it, a click on the track moves the cursor there.
 */
import { formatDuration, formatOffset } from "../model/format.js";
import type { Selection } from "../model/selection.js";
import { LANES } from "../model/span-rules.js";
import type { RunModel, Span } from "../model/types.js";
import { element } from "./dom.js";

/** What all the records held span: the page's origin, the newest record, the runs. */
export interface TimelineExtent {
	origin: number | undefined;
	lastT: number | undefined;
	runs: readonly { startT: number; endT?: number | undefined }[];
}

/** Lanes always drawn; the others only when they have bars. */
const CORE_LANES = new Set(["run", "turn", "model", "tool"]);

/** Puts overlapping spans on separate rows of a lane (first fit). */
function pack(spans: readonly Span[], now: number): Span[][] {
	const rows: { end: number; spans: Span[] }[] = [];
	for (const span of [...spans].sort((a, b) => a.startT - b.startT)) {
		const end = span.endT ?? now;
		const row = rows.find((candidate) => candidate.end <= span.startT);
		if (row) {
			row.spans.push(span);
			row.end = end;
		} else rows.push({ end, spans: [span] });
	}
	return rows.map((row) => row.spans);
}

/** Round tick steps for an axis `range` ms long (about six ticks). */
function tickStep(range: number): number {
	const rough = range / 6;
	const power = 10 ** Math.floor(Math.log10(Math.max(rough, 1)));
	for (const factor of [1, 2, 5, 10]) if (power * factor >= rough) return power * factor;
	return power * 10;
}

export class TimelineView {
	private wholeSession = false;
	private last: { model: RunModel; now: number; extent: TimelineExtent } | undefined;
	private selection: Selection | undefined;

	constructor(
		private readonly host: HTMLElement,
		scope: HTMLSelectElement,
		private readonly handlers: { onSelectSpan(span: Span): void; onSeekTime(t: number): void },
	) {
		scope.addEventListener("change", () => {
			this.wholeSession = scope.value === "all";
			if (this.last) this.render(this.last.model, this.last.now, this.last.extent);
		});
	}

	/**
	 * The time span shown, the same wherever the cursor is inside it (so a click on the track
	 * means the same moment before and after the cursor moves): the whole run the cursor is in,
	 * as long as it lasted in all the records, or everything.
	 */
	private domain(now: number, extent: TimelineExtent): [number, number] {
		const origin = extent.origin ?? now;
		const end = Math.max(extent.lastT ?? now, now);
		if (!this.wholeSession) {
			const run = extent.runs.findLast((candidate) => candidate.startT <= now);
			if (run) return [run.startT, Math.max(run.endT ?? end, run.startT + 1)];
		}
		return [origin, Math.max(end, origin + 1)];
	}

	/**
	 * Draws the model's spans; `now` is the cursor's time (where open bars end and the cursor
	 * line stands), `extent` what all the records span.
	 */
	render(model: RunModel, now: number, extent: TimelineExtent): void {
		this.last = { model, now, extent };
		const [from, to] = this.domain(now, extent);
		const range = to - from;
		const percent = (t: number) => `${(((t - from) / range) * 100).toFixed(3)}%`;
		const visible = model.spans.filter((span) => (span.endT ?? now) >= from && span.startT <= to);
		const rows = element("div", "timeline-rows");
		const axis = element("div", "timeline-axis");
		const step = tickStep(range);
		const origin = extent.origin ?? from;
		for (let tick = Math.ceil((from - origin) / step) * step; origin + tick <= to; tick += step) {
			const mark = element("span", "tick", formatOffset(tick).replace(/\.?0+ s$/, " s"));
			mark.style.left = percent(origin + tick);
			axis.append(mark);
		}
		rows.append(this.laneRow("", [axis], "axis-row"));
		for (const lane of LANES) {
			const spans = visible.filter((span) => span.kind === lane.kind);
			if (spans.length === 0 && !CORE_LANES.has(lane.kind)) continue;
			const tracks = lane.kind === "tool" || lane.kind === "approval" || lane.kind === "model" ? pack(spans, now) : [spans];
			tracks.forEach((track, index) => {
				const bars = track.map((span) => this.bar(span, from, range, now, percent));
				rows.append(this.laneRow(index === 0 ? lane.title : "", bars, `lane lane-${lane.kind}`));
			});
			if (tracks.length === 0) rows.append(this.laneRow(lane.title, [], `lane lane-${lane.kind}`));
		}
		const cursor = element("div", "timeline-cursor");
		cursor.style.left = percent(Math.min(to, Math.max(from, now)));
		cursor.title = `cursor ${formatOffset(now - origin)}`;
		const overlay = element("div", "timeline-overlay");
		overlay.append(cursor);
		this.host.replaceChildren(rows, overlay);
		this.host.dataset["from"] = String(from);
		this.host.dataset["to"] = String(to);
		this.applySelection();
	}

	private laneRow(title: string, bars: HTMLElement[], className: string): HTMLElement {
		const row = element("div", `timeline-row ${className}`);
		const track = element("div", "track");
		track.append(...bars);
		track.addEventListener("click", (event) => {
			if ((event.target as Element).closest(".bar")) return;
			const rect = track.getBoundingClientRect();
			const [from, to] = [Number(this.host.dataset["from"]), Number(this.host.dataset["to"])];
			this.handlers.onSeekTime(from + ((event.clientX - rect.left) / Math.max(1, rect.width)) * (to - from));
		});
		row.append(element("span", "lane-title", title), track);
		return row;
	}

	private bar(span: Span, from: number, range: number, now: number, percent: (t: number) => string): HTMLElement {
		const end = span.endT ?? now;
		const bar = element("div", `bar bar-${span.kind} status-${span.status}`);
		bar.dataset["spanId"] = span.id;
		bar.dataset["kind"] = span.kind;
		bar.dataset["status"] = span.status;
		if (span.turn !== undefined) bar.dataset["turn"] = String(span.turn);
		bar.style.left = percent(span.startT);
		bar.style.width = `max(3px, ${(((end - span.startT) / range) * 100).toFixed(3)}%)`;
		const firstToken = span.marks.find((mark) => mark.label === "first token");
		if (firstToken && end > span.startT) {
			// The wait for the model (request sent, nothing back yet), lighter.
			const wait = element("span", "wait");
			wait.style.width = `${(((firstToken.t - span.startT) / (end - span.startT)) * 100).toFixed(2)}%`;
			bar.append(wait);
		}
		const duration = formatDuration(end - span.startT);
		bar.append(element("span", "bar-label", `${span.label} · ${span.status === "open" ? "running" : duration}`));
		const wait = firstToken ? `, first token after ${formatDuration(firstToken.t - span.startT)}` : "";
		bar.title = `${span.label}: ${span.status === "open" ? "running" : span.status}, ${duration}${wait}, from ${formatOffset(span.startT - from)} in this view`;
		bar.addEventListener("click", () => this.handlers.onSelectSpan(span));
		return bar;
	}

	/** Lights up the selected bar, or the selected turns' bars. */
	setSelection(selection: Selection | undefined): void {
		this.selection = selection;
		this.applySelection();
	}

	private applySelection(): void {
		const selection = this.selection;
		for (const bar of Array.from(this.host.querySelectorAll<HTMLElement>(".bar"))) {
			const lit = selection !== undefined && (selection.spanId === bar.dataset["spanId"] || (selection.spanId === undefined && bar.dataset["turn"] !== undefined && selection.turns.includes(Number(bar.dataset["turn"])) && bar.dataset["kind"] !== "run"));
			bar.classList.toggle("selected", lit);
		}
	}
}
