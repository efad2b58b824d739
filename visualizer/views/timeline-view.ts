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
	private readonly rows = new Map<string, { row: HTMLElement; track: HTMLElement }>();
	private readonly bars = new Map<string, HTMLElement>();
	private readonly rowsHost = element("div", "timeline-rows");
	private readonly overlay = element("div", "timeline-overlay");
	private readonly cursor = element("div", "timeline-cursor");
	private selection: Selection | undefined;

	constructor(
		private readonly host: HTMLElement,
		scope: HTMLSelectElement,
		private readonly handlers: { onSelectSpan(span: Span): void; onSeekTime(t: number): void },
	) {
		this.overlay.append(this.cursor);
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
	 * line stands), `extent` what all the records span. Rows and bars are kept between draws and
	 * updated in place: live, the timeline is drawn several times a second, and a bar replaced
	 * under the pointer would lose the click.
	 */
	render(model: RunModel, now: number, extent: TimelineExtent): void {
		this.last = { model, now, extent };
		const [from, to] = this.domain(now, extent);
		const range = to - from;
		const percent = (t: number) => `${(((t - from) / range) * 100).toFixed(3)}%`;
		// A call that had ended before the visualizer attached has no known time: no bar for it.
		const visible = model.spans.filter((span) => (span.endT ?? now) >= from && span.startT <= to && !(span.restored === true && span.endT === span.startT));
		const axis = this.row("axis", "", "axis-row");
		const step = tickStep(range);
		const origin = extent.origin ?? from;
		const ticks: HTMLElement[] = [];
		for (let tick = Math.ceil((from - origin) / step) * step; origin + tick <= to; tick += step) {
			const mark = element("span", "tick", formatOffset(tick).replace(/\.?0+ s$/, " s"));
			mark.style.left = percent(origin + tick);
			ticks.push(mark);
		}
		axis.track.replaceChildren(...ticks);
		const rows: HTMLElement[] = [axis.row];
		const shown = new Set<string>();
		for (const lane of LANES) {
			const spans = visible.filter((span) => span.kind === lane.kind);
			if (spans.length === 0 && !CORE_LANES.has(lane.kind)) continue;
			const tracks = lane.kind === "tool" || lane.kind === "approval" || lane.kind === "model" ? pack(spans, now) : [spans];
			if (tracks.length === 0) tracks.push([]);
			tracks.forEach((track, index) => {
				const { row, track: element } = this.row(`${lane.kind}:${index}`, index === 0 ? lane.title : "", `lane lane-${lane.kind}`);
				track.forEach((span, position) => {
					const bar = this.bar(span, range, now, percent);
					shown.add(span.id);
					if (element.children[position] !== bar) element.insertBefore(bar, element.children[position] ?? null);
				});
				while (element.children.length > track.length) element.lastElementChild?.remove();
				rows.push(row);
			});
		}
		for (const id of this.bars.keys()) if (!shown.has(id)) this.bars.delete(id);
		for (const [key, row] of this.rows) if (!rows.includes(row.row)) this.rows.delete(key);
		this.rowsHost.replaceChildren(...rows);
		this.cursor.style.left = percent(Math.min(to, Math.max(from, now)));
		this.cursor.title = `cursor ${formatOffset(now - origin)}`;
		if (this.host.firstElementChild !== this.rowsHost) this.host.replaceChildren(this.rowsHost, this.overlay);
		this.host.dataset["from"] = String(from);
		this.host.dataset["to"] = String(to);
		this.applySelection();
	}

	/** The row with this key, made on first use. */
	private row(key: string, title: string, className: string): { row: HTMLElement; track: HTMLElement } {
		let found = this.rows.get(key);
		if (!found) {
			const row = element("div", `timeline-row ${className}`);
			const track = element("div", "track");
			track.addEventListener("click", (event) => {
				if ((event.target as Element).closest(".bar")) return;
				const rect = track.getBoundingClientRect();
				const [from, to] = [Number(this.host.dataset["from"]), Number(this.host.dataset["to"])];
				this.handlers.onSeekTime(from + ((event.clientX - rect.left) / Math.max(1, rect.width)) * (to - from));
			});
			row.append(element("span", "lane-title", title), track);
			found = { row, track };
			this.rows.set(key, found);
		}
		return found;
	}

	/** The bar of a span, made on first use and brought up to date. */
	private bar(span: Span, range: number, now: number, percent: (t: number) => string): HTMLElement {
		let bar = this.bars.get(span.id);
		if (!bar) {
			bar = element("div");
			bar.dataset["spanId"] = span.id;
			bar.dataset["kind"] = span.kind;
			bar.addEventListener("click", () => {
				const current = this.last?.model.spans.find((candidate) => candidate.id === span.id);
				this.handlers.onSelectSpan(current ?? span);
			});
			this.bars.set(span.id, bar);
		}
		const end = span.endT ?? now;
		bar.className = `bar bar-${span.kind} status-${span.status}`;
		bar.dataset["status"] = span.status;
		if (span.turn !== undefined) bar.dataset["turn"] = String(span.turn);
		bar.style.left = percent(span.startT);
		bar.style.width = `max(3px, ${(((end - span.startT) / range) * 100).toFixed(3)}%)`;
		const firstToken = span.marks.find((mark) => mark.label === "first token");
		const parts: HTMLElement[] = [];
		if (firstToken && end > span.startT) {
			// The wait for the model (request sent, nothing back yet), lighter.
			const wait = element("span", "wait");
			wait.style.width = `${(((firstToken.t - span.startT) / (end - span.startT)) * 100).toFixed(2)}%`;
			parts.push(wait);
		}
		const duration = formatDuration(end - span.startT);
		const doing = span.openWord ?? "running";
		parts.push(element("span", "bar-label", `${span.label} · ${span.status === "open" ? doing : duration}`));
		bar.replaceChildren(...parts);
		const wait = firstToken ? `, first token after ${formatDuration(firstToken.t - span.startT)}` : "";
		bar.title = `${span.label}: ${span.status === "open" ? doing : span.status}, ${duration}${wait}`;
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
