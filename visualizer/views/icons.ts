/**
 * The controls' icons, drawn as inline SVG paths: no icon font and no symbol characters, which
 * a plain Debian Chromium (DejaVu and Liberation fonts) draws as empty boxes (`⏮`).
 */
import { svg } from "./dom.js";

/** Icon names and their paths in a 16×16 box. */
const PATHS = {
	start: "M3 3h2v10H3zM13 3v10L6 8z",
	back: "M12 3v10L5 8zM3 3h2v10H3z",
	play: "M4 2.5v11L13 8z",
	pause: "M4 3h3v10H4zM9 3h3v10H9z",
	forward: "M4 3v10l7-5zM11 3h2v10h-2z",
	end: "M3 3v10l7-5zM11 3h2v10h-2z",
	plus: "M7 3h2v4h4v2H9v4H7V9H3V7h4z",
	minus: "M3 7h10v2H3z",
	fit: "M2 2h4v2H4v2H2zM10 2h4v4h-2V4h-2zM2 10h2v2h2v2H2zM12 10h2v4h-4v-2h2z",
	target: "M7 1h2v3H7zM7 12h2v3H7zM1 7h3v2H1zM12 7h3v2h-3zM8 5a3 3 0 1 1 0 6a3 3 0 1 1 0-6z",
	expand: "M5 3l6 5l-6 5z",
	collapse: "M3 5l5 6l5-6z",
	live: "M8 5a3 3 0 1 1 0 6a3 3 0 1 1 0-6z",
} as const;

export type IconName = keyof typeof PATHS;

/**
 * An icon as an SVG element (decorative: the control it sits in carries the label).
 *
 * @example
 * button.prepend(icon("play"));
 */
export function icon(name: IconName, size = 14): SVGSVGElement {
	const root = svg("svg", { viewBox: "0 0 16 16", width: size, height: size, class: `icon icon-${name}`, "aria-hidden": "true", focusable: "false" });
	root.append(svg("path", { d: PATHS[name] }));
	return root;
}

/**
 * Fills a button with an icon and a visible text label (or a hidden one, read by screen
 * readers and shown as a tooltip, when `showText` is false).
 *
 * @example
 * iconButton(byId("zoom-in"), "plus", "Zoom in", false);
 */
export function iconButton(button: HTMLButtonElement, name: IconName, label: string, showText = true): HTMLButtonElement {
	const text = document.createElement("span");
	text.className = showText ? "label" : "sr-only";
	text.textContent = label;
	button.replaceChildren(icon(name), text);
	button.setAttribute("aria-label", label);
	if (!button.title) button.title = label;
	return button;
}
