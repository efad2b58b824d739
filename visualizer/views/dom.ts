/** Small DOM helpers shared by the views. */

/** An HTML element with a class and text. */
export function element<K extends keyof HTMLElementTagNameMap>(tag: K, className?: string, text?: string): HTMLElementTagNameMap[K] {
	const node = document.createElement(tag);
	if (className) node.className = className;
	if (text !== undefined) node.textContent = text;
	return node;
}

const SVG_NS = "http://www.w3.org/2000/svg";

/** An SVG element with attributes. */
export function svg<K extends keyof SVGElementTagNameMap>(tag: K, attributes: Record<string, string | number> = {}): SVGElementTagNameMap[K] {
	const node = document.createElementNS(SVG_NS, tag);
	for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, String(value));
	return node;
}

/** The element with this id, which index.html must have. */
export function byId<T extends HTMLElement>(id: string): T {
	const found = document.getElementById(id);
	if (!found) throw new Error(`visualizer: #${id} is missing from index.html`);
	return found as T;
}

/**
 * Keeps a scrolling list at its end while the reader is there, and leaves it alone once they
 * scroll up to read (until they scroll back down). One scroll per frame: reading scrollHeight
 * forces a layout.
 */
export class TailFollower {
	private following = true;
	private pending = false;
	/** Set while the follower itself scrolls, so its own scroll event does not count as the reader's. */
	private scrolling = false;
	/** The list's height at the last scroll event: a scroll that comes with a new height is the layout's. */
	private height = 0;

	constructor(private readonly list: HTMLElement) {
		list.addEventListener("scroll", () => {
			const height = list.scrollHeight;
			const relaid = height !== this.height;
			this.height = height;
			if (this.scrolling) {
				this.scrolling = false;
				return;
			}
			// Entries drawn again or closed change the height, and the browser moves the scroll position
			// with it: not the reader scrolling away. Followed to the end again instead.
			if (relaid && this.following) {
				this.request();
				return;
			}
			this.following = list.scrollTop + list.clientHeight >= list.scrollHeight - 24;
			list.dataset["following"] = String(this.following);
		});
		list.dataset["following"] = "true";
	}

	/** Whether the list follows its end. */
	get isFollowing(): boolean {
		return this.following;
	}

	/** Follows the end again (a seek, a reset). */
	resume(): void {
		this.following = true;
		this.list.dataset["following"] = "true";
		this.request();
	}

	/** Scrolls to the end in the next frame, if following. */
	request(): void {
		if (!this.following || this.pending) return;
		this.pending = true;
		requestAnimationFrame(() => {
			this.pending = false;
			if (!this.following) return;
			if (this.list.scrollTop + this.list.clientHeight >= this.list.scrollHeight - 1) return;
			this.scrolling = true;
			this.height = this.list.scrollHeight;
			this.list.scrollTop = this.list.scrollHeight;
		});
	}
}

/** One keyed child for {@link reconcile}. */
export interface KeyedItem {
	key: string;
	/** Changes when the item must be drawn again. */
	rev: number;
	create(): HTMLElement;
}

/**
 * Makes `container`'s children the items' elements, in order: an item whose key and rev are
 * unchanged keeps its element (and what the reader opened in it), others are drawn anew,
 * elements of items that are gone are removed. Children without a key are left at the end.
 */
export function reconcile(container: HTMLElement, items: readonly KeyedItem[]): void {
	const existing = new Map<string, HTMLElement>();
	for (const child of Array.from(container.children) as HTMLElement[]) {
		const key = child.dataset["key"];
		if (key !== undefined) existing.set(key, child);
	}
	let cursor: Element | null = container.firstElementChild;
	for (const item of items) {
		let node = existing.get(item.key);
		existing.delete(item.key);
		if (node && node.dataset["rev"] !== String(item.rev)) {
			const fresh = item.create();
			if (cursor === node) cursor = fresh;
			node.replaceWith(fresh);
			node = fresh;
		}
		if (!node) node = item.create();
		node.dataset["key"] = item.key;
		node.dataset["rev"] = String(item.rev);
		if (node !== cursor) container.insertBefore(node, cursor);
		cursor = node.nextElementSibling;
	}
	for (const node of existing.values()) node.remove();
}
