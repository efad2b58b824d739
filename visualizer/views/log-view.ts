/**
 * The event log: the records up to the replay cursor (the live end, live), newest last, with
 * category and text filters. A row opens to its payload, pretty-printed; the list follows its
 * end unless the reader scrolled up; at most MAX_ROWS rows are in the page, however long the
 * session.
 */
import type { InspectionRecord } from "../../src/inspect/records.js";
import type { ChartIndex } from "../model/chart-index.js";
import { formatOffset } from "../model/format.js";
import { type LogCategory, type LogLine, describeRecord } from "../model/log-lines.js";
import type { RecordStore } from "../model/record-store.js";
import { type Selection, selects } from "../model/selection.js";
import type { RunModel } from "../model/types.js";
import { TailFollower, element } from "./dom.js";
import { icon } from "./icons.js";
import { payloadView } from "./payload-view.js";

/** Rows kept in the page. */
export const MAX_ROWS = 500;

/** The log's elements in index.html. */
export interface LogElements {
	list: HTMLElement;
	filters: HTMLElement;
	search: HTMLInputElement;
}

export class LogView {
	private readonly hidden = new Set<LogCategory>();
	private text = "";
	private readonly expanded = new Set<number>();
	private readonly follower: TailFollower;
	/** The position the rows reach (the records before it are listed). */
	private shown = { to: 0 };
	/** Whether older records exist than the first row. */
	private truncated = false;
	private model: RunModel | undefined;
	private selection: Selection | undefined;
	private dirty = true;

	constructor(
		private readonly elements: LogElements,
		private readonly chart: ChartIndex,
		private readonly onSelectRecord: (seq: number) => void,
	) {
		this.follower = new TailFollower(elements.list);
		for (const input of Array.from(elements.filters.querySelectorAll<HTMLInputElement>("input[type=checkbox][data-category]"))) {
			const category = input.dataset["category"] as LogCategory;
			if (!input.checked) this.hidden.add(category);
			input.addEventListener("change", () => {
				if (input.checked) this.hidden.delete(category);
				else this.hidden.add(category);
				this.dirty = true;
				this.onFilter?.();
			});
		}
		elements.search.addEventListener("input", () => {
			this.text = elements.search.value.trim().toLowerCase();
			this.dirty = true;
			this.onFilter?.();
		});
	}

	/** Called when a filter changes (the page re-renders). */
	onFilter: (() => void) | undefined;

	/** The line for a record, with the names of the model's actors. */
	line(record: InspectionRecord, model: RunModel): LogLine | undefined {
		const nameOf = (sessionId: string | undefined) => {
			if (sessionId === undefined) return "outside";
			const actor = model.actors[sessionId];
			return actor ? (actor.parentId === undefined ? actor.name : actor.actorId) : sessionId;
		};
		return describeRecord(record, { chart: this.chart, nameOf });
	}

	/** Whether the log shows this record with the current filters (replay steps go from shown row to shown row). */
	shows(record: InspectionRecord, model: RunModel): boolean {
		const line = this.line(record, model);
		return line !== undefined && this.passes(line);
	}

	private passes(line: LogLine): boolean {
		if (this.hidden.has(line.category)) return false;
		return this.text === "" || `${line.title} ${line.who} ${line.summary} ${line.cause ?? ""}`.toLowerCase().includes(this.text);
	}

	/** Shows the records before `cursor`. `names` is the newest model (actors keep their names). */
	render(store: RecordStore, cursor: number, names: RunModel): void {
		this.model = names;
		const incremental = !this.dirty && cursor >= this.shown.to && this.shown.to >= store.start && cursor - this.shown.to < MAX_ROWS;
		if (incremental) {
			this.append(store.slice(this.shown.to, cursor));
		} else {
			this.elements.list.replaceChildren();
			this.append(this.lastShown(store, cursor));
			this.follower.resume();
		}
		this.shown.to = cursor;
		this.dirty = false;
		this.trim();
		this.markCursor();
		this.follower.request();
	}

	/** The last MAX_ROWS shown records before `cursor`, oldest first. */
	private lastShown(store: RecordStore, cursor: number): InspectionRecord[] {
		const picked: InspectionRecord[] = [];
		let at = cursor - 1;
		for (; at >= store.start && picked.length < MAX_ROWS; at--) {
			const record = store.at(at);
			if (record && this.model && this.shows(record, this.model)) picked.push(record);
		}
		this.truncated = store.start > 0 || at >= store.start;
		return picked.reverse();
	}

	private append(records: readonly InspectionRecord[]): void {
		const model = this.model;
		if (!model) return;
		const fragment = document.createDocumentFragment();
		for (const record of records) {
			const line = this.line(record, model);
			if (line && this.passes(line)) fragment.append(this.row(record, line, model));
		}
		this.elements.list.append(fragment);
	}

	private trim(): void {
		const rows = this.elements.list.querySelectorAll("li.row");
		for (let index = 0; index < rows.length - MAX_ROWS; index++) rows[index]?.remove();
		if (rows.length > MAX_ROWS) this.truncated = true;
		const earlier = this.elements.list.querySelector("li.earlier");
		if (this.truncated && !earlier) this.elements.list.prepend(element("li", "earlier", "Earlier events are not listed: move the replay cursor back to see them."));
		else if (!this.truncated) earlier?.remove();
	}

	private row(record: InspectionRecord, line: LogLine, model: RunModel): HTMLLIElement {
		const row = element("li", `row ${line.category}${line.eventless ? " eventless" : ""}${line.tone === "error" ? " error" : ""}`);
		row.dataset["seq"] = String(record.seq);
		row.dataset["type"] = line.title;
		row.dataset["category"] = line.category;
		const toggle = element("button", "row-toggle");
		toggle.type = "button";
		toggle.append(icon("expand", 10));
		toggle.setAttribute("aria-expanded", "false");
		toggle.setAttribute("aria-label", `Show the payload of ${line.title}`);
		const head = element("div", "row-head");
		head.append(toggle, element("span", "time", formatOffset(record.t - (model.origin ?? record.t))), element("span", "title", line.title), element("span", "summary", line.summary));
		const meta = element("div", "row-meta", line.who);
		if (line.eventless) meta.append(element("span", "cause", line.cause ? ` · eventless step, in the step of ${line.cause}` : " · eventless step"));
		row.append(head, meta);
		if (selects(this.selection, record.seq)) row.classList.add("selected");
		if (this.expanded.has(record.seq)) this.expand(row, line);
		head.addEventListener("click", () => {
			if (this.expanded.has(record.seq)) {
				this.expanded.delete(record.seq);
				row.querySelector(".payload")?.remove();
				toggle.setAttribute("aria-expanded", "false");
				row.classList.remove("expanded");
			} else {
				this.expanded.add(record.seq);
				this.expand(row, line);
			}
			this.onSelectRecord(record.seq);
		});
		return row;
	}

	private expand(row: HTMLElement, line: LogLine): void {
		row.classList.add("expanded");
		row.querySelector(".row-toggle")?.setAttribute("aria-expanded", "true");
		row.append(payloadView(line.payload));
		// Bounded like the rows: a long session does not keep every payload ever opened.
		if (this.expanded.size > MAX_ROWS) this.expanded.delete(this.expanded.values().next().value ?? 0);
	}

	private markCursor(): void {
		this.elements.list.querySelector("li.cursor")?.classList.remove("cursor");
		const rows = this.elements.list.querySelectorAll("li.row");
		rows[rows.length - 1]?.classList.add("cursor");
	}

	/** Lights up the selected rows; `reveal` scrolls the first into view (the selection came from elsewhere). */
	setSelection(selection: Selection | undefined, reveal: boolean): void {
		this.selection = selection;
		let first: HTMLElement | undefined;
		for (const row of Array.from(this.elements.list.querySelectorAll<HTMLElement>("li.row"))) {
			const lit = selects(selection, Number(row.dataset["seq"]));
			row.classList.toggle("selected", lit);
			if (lit && !first) first = row;
		}
		if (reveal && first) first.scrollIntoView({ block: "nearest" });
	}
}
