/**
 * Zoom and pan over the chart: the SVG fills its pane and its viewBox is the camera. At scale
 * 1 a layout unit is a CSS pixel (the chart's true size, labels 12 px); "fit" shows the whole
 * chart. The mouse wheel and a pinch zoom around the pointer, a drag pans, the keyboard does
 * both, and while `follow` is on the camera moves to keep the active state in view.
 */
import type { Box } from "./chart-view.js";

const MIN_SCALE = 0.05;
const MAX_SCALE = 6;
/** One zoom step (a button, a key). */
export const ZOOM_STEP = 1.25;
/** Screen pixels at the pane's top that the toolbar covers. */
const TOOLBAR_CLEARANCE = 52;
/** Pointer travel (px) before a press becomes a drag rather than a click. */
const DRAG_SLOP = 4;

/** Where the camera is: the chart point at the pane's top-left and the scale. */
export interface CameraState {
	x: number;
	y: number;
	scale: number;
	follow: boolean;
}

export class ChartCamera {
	private x = 0;
	private y = 0;
	private scale = 1;
	private content = { width: 1, height: 1 };
	private animation: number | undefined;
	private readonly pointers = new Map<number, { x: number; y: number }>();
	private drag: { startX: number; startY: number; lastX: number; lastY: number; moved: boolean } | undefined;
	private pinch: { distance: number } | undefined;
	/** Set when a drag ends: the click the browser may send for that press is not a click. */
	private suppressClick = false;
	/** Keep the active state in view as the run moves. */
	follow = true;

	constructor(
		private readonly pane: HTMLElement,
		private readonly root: SVGSVGElement,
		private readonly onChange: (state: CameraState) => void,
	) {
		pane.addEventListener("wheel", (event) => this.onWheel(event), { passive: false });
		pane.addEventListener("pointerdown", (event) => this.onPointerDown(event));
		pane.addEventListener("pointermove", (event) => this.onPointerMove(event));
		pane.addEventListener("pointerup", (event) => this.onPointerUp(event));
		pane.addEventListener("pointercancel", (event) => this.onPointerUp(event));
		// A press that became a drag is not a click on the state under it.
		pane.addEventListener(
			"click",
			(event) => {
				if (this.suppressClick) event.stopPropagation();
				this.suppressClick = false;
			},
			true,
		);
		// A pane made narrower (the window, or the split) keeps the followed state in view.
		new ResizeObserver(() => {
			const box = this.follow ? this.followed?.() : undefined;
			if (box) this.ensureVisible(box, false);
			else this.apply();
		}).observe(pane);
	}

	/** The box `follow` keeps in view (the active state's), given by the pane. */
	followed: (() => Box | undefined) | undefined;

	/** The camera's position and scale. */
	get state(): CameraState {
		return { x: this.x, y: this.y, scale: this.scale, follow: this.follow };
	}

	private get viewport(): { width: number; height: number } {
		return { width: Math.max(1, this.pane.clientWidth), height: Math.max(1, this.pane.clientHeight) };
	}

	/** The chart's size changed (a state was closed or opened). */
	setContent(size: { width: number; height: number }): void {
		this.content = { width: Math.max(1, size.width), height: Math.max(1, size.height) };
		this.apply();
	}

	/** The whole chart in the pane. */
	fit(): void {
		const { width, height } = this.viewport;
		const margin = 12;
		const top = Math.min(TOOLBAR_CLEARANCE, height / 4);
		const scale = Math.min((width - 2 * margin) / this.content.width, (height - top - margin) / this.content.height);
		this.scale = clamp(scale, MIN_SCALE, MAX_SCALE);
		this.x = this.content.width / 2 - width / this.scale / 2;
		this.y = -(top + (height - top - margin - this.content.height * this.scale) / 2) / this.scale;
		this.apply();
	}

	/** True size (scale 1), centred on `box` if given, else where the pane's centre is. */
	actualSize(box?: Box): void {
		const { width, height } = this.viewport;
		const centre = box ? { x: box.x + box.width / 2, y: box.y + box.height / 2 } : { x: this.x + width / this.scale / 2, y: this.y + height / this.scale / 2 };
		this.scale = 1;
		this.x = centre.x - width / 2;
		this.y = centre.y - height / 2;
		this.apply();
	}

	/** Zooms by `factor` around a point of the pane (client coordinates; its centre by default). */
	zoomBy(factor: number, clientX?: number, clientY?: number): void {
		const rect = this.pane.getBoundingClientRect();
		const px = clientX === undefined ? rect.width / 2 : clientX - rect.left;
		const py = clientY === undefined ? rect.height / 2 : clientY - rect.top;
		const next = clamp(this.scale * factor, MIN_SCALE, MAX_SCALE);
		// The chart point under the pointer stays under it.
		const chartX = this.x + px / this.scale;
		const chartY = this.y + py / this.scale;
		this.scale = next;
		this.x = chartX - px / next;
		this.y = chartY - py / next;
		this.apply();
	}

	/** Pans by screen pixels. */
	panBy(dx: number, dy: number): void {
		this.x -= dx / this.scale;
		this.y -= dy / this.scale;
		this.apply();
	}

	/**
	 * Moves (smoothly) so that `box` is in the pane, clear of the toolbar, if it is not already:
	 * centred, so what is around it shows too (a box too big for the pane shows its top-left).
	 */
	ensureVisible(box: Box, animate = true): void {
		const { width, height } = this.viewport;
		const margin = Math.min(24, width / 8, height / 8) / this.scale;
		const top = Math.min(TOOLBAR_CLEARANCE, height / 4) / this.scale;
		const viewW = width / this.scale;
		const viewH = height / this.scale;
		const inside = box.x - margin >= this.x && box.x + box.width + margin <= this.x + viewW && box.y - top >= this.y && box.y + box.height + margin <= this.y + viewH;
		if (inside) return;
		const x = box.width + 2 * margin > viewW ? box.x - margin : box.x + box.width / 2 - viewW / 2;
		const y = box.height + top + margin > viewH ? box.y - top : box.y + box.height / 2 - (viewH + top) / 2 + top;
		if (!animate) {
			this.x = x;
			this.y = y;
			this.apply();
			return;
		}
		this.animateTo(x, y);
	}

	/**
	 * Shows `box` whole, centred: at true size or closer (as it is now) when it fits, else
	 * zoomed out just enough.
	 */
	showBox(box: Box): void {
		const { width, height } = this.viewport;
		const top = Math.min(TOOLBAR_CLEARANCE, height / 4);
		const fits = Math.min((width - 48) / box.width, (height - top - 24) / box.height);
		this.scale = clamp(Math.min(fits, Math.max(this.scale, 1)), MIN_SCALE, MAX_SCALE);
		const viewW = width / this.scale;
		const viewH = height / this.scale;
		this.animateTo(box.x + box.width / 2 - viewW / 2, box.y + box.height / 2 - (viewH + top / this.scale) / 2 + top / this.scale);
	}

	private animateTo(x: number, y: number): void {
		if (this.animation !== undefined) cancelAnimationFrame(this.animation);
		const from = { x: this.x, y: this.y };
		const start = performance.now();
		const duration = 220;
		const step = (now: number) => {
			const progress = Math.min(1, (now - start) / duration);
			const eased = 1 - (1 - progress) ** 3;
			this.x = from.x + (x - from.x) * eased;
			this.y = from.y + (y - from.y) * eased;
			this.apply();
			this.animation = progress < 1 ? requestAnimationFrame(step) : undefined;
		};
		this.animation = requestAnimationFrame(step);
	}

	/** Keyboard zoom and pan; true when the key was one of the camera's. */
	handleKey(event: KeyboardEvent): boolean {
		const pan = event.shiftKey ? 240 : 60;
		switch (event.key) {
			case "+":
			case "=":
				this.zoomBy(ZOOM_STEP);
				return true;
			case "-":
			case "_":
				this.zoomBy(1 / ZOOM_STEP);
				return true;
			case "1":
				this.actualSize();
				return true;
			case "0":
			case "f":
				this.fit();
				return true;
			case "ArrowLeft":
				this.manualPan(pan, 0);
				return true;
			case "ArrowRight":
				this.manualPan(-pan, 0);
				return true;
			case "ArrowUp":
				this.manualPan(0, pan);
				return true;
			case "ArrowDown":
				this.manualPan(0, -pan);
				return true;
			default:
				return false;
		}
	}

	/** A pan the reader asked for: they want to look elsewhere, so following stops. */
	private manualPan(dx: number, dy: number): void {
		this.follow = false;
		this.panBy(dx, dy);
	}

	private onWheel(event: WheelEvent): void {
		event.preventDefault();
		const unit = event.deltaMode === 1 ? 16 : event.deltaMode === 2 ? this.viewport.height : 1;
		// A trackpad pinch arrives as a wheel event with ctrlKey, in small steps.
		const speed = event.ctrlKey ? 0.01 : 0.0015;
		this.zoomBy(Math.exp(-event.deltaY * unit * speed), event.clientX, event.clientY);
	}

	private onPointerDown(event: PointerEvent): void {
		this.suppressClick = false;
		if (event.button !== 0 || (event.target as Element).closest(".toggle, button")) return;
		this.pointers.set(event.pointerId, { x: event.clientX, y: event.clientY });
		if (this.pointers.size === 2) {
			this.pinch = { distance: this.pointerDistance() };
			return;
		}
		this.drag = { startX: event.clientX, startY: event.clientY, lastX: event.clientX, lastY: event.clientY, moved: false };
	}

	private onPointerMove(event: PointerEvent): void {
		if (!this.pointers.has(event.pointerId)) return;
		this.pointers.set(event.pointerId, { x: event.clientX, y: event.clientY });
		if (this.pinch && this.pointers.size === 2) {
			const distance = this.pointerDistance();
			const [a, b] = [...this.pointers.values()];
			if (a && b && this.pinch.distance > 0) this.zoomBy(distance / this.pinch.distance, (a.x + b.x) / 2, (a.y + b.y) / 2);
			this.pinch.distance = distance;
			return;
		}
		const drag = this.drag;
		if (!drag) return;
		if (!drag.moved && Math.hypot(event.clientX - drag.startX, event.clientY - drag.startY) < DRAG_SLOP) return;
		if (!drag.moved) {
			drag.moved = true;
			this.pane.setPointerCapture(event.pointerId);
			this.pane.classList.add("dragging");
			this.follow = false;
			this.onChange(this.state);
		}
		this.panBy(event.clientX - drag.lastX, event.clientY - drag.lastY);
		drag.lastX = event.clientX;
		drag.lastY = event.clientY;
	}

	private onPointerUp(event: PointerEvent): void {
		this.pointers.delete(event.pointerId);
		if (this.pointers.size < 2) this.pinch = undefined;
		this.pane.classList.remove("dragging");
		if (this.pane.hasPointerCapture(event.pointerId)) this.pane.releasePointerCapture(event.pointerId);
		// The click that ends a drag (if the browser sends one) is swallowed by the capture listener.
		if (this.drag?.moved) this.suppressClick = true;
		this.drag = undefined;
	}

	private pointerDistance(): number {
		const [a, b] = [...this.pointers.values()];
		return a && b ? Math.hypot(a.x - b.x, a.y - b.y) : 0;
	}

	/** Writes the camera to the SVG's viewBox. */
	private apply(): void {
		const { width, height } = this.viewport;
		this.root.setAttribute("viewBox", `${this.x} ${this.y} ${width / this.scale} ${height / this.scale}`);
		this.onChange(this.state);
	}
}

function clamp(value: number, min: number, max: number): number {
	return Math.min(max, Math.max(min, value));
}
