/** Times and durations as the page prints them. */

/**
 * A duration: `840 ms`, `2.35 s`, `14.2 s`, `3 min 05 s`.
 *
 * @example
 * formatDuration(2345); // "2.35 s"
 */
export function formatDuration(ms: number): string {
	if (!Number.isFinite(ms) || ms < 0) return "–";
	if (ms < 1000) return `${Math.round(ms)} ms`;
	if (ms < 60_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
	const seconds = Math.round(ms / 1000);
	return `${Math.floor(seconds / 60)} min ${String(seconds % 60).padStart(2, "0")} s`;
}

/**
 * A time relative to the first record (every time on the page counts from it): `+1.234 s`.
 *
 * @example
 * formatOffset(1234); // "+1.234 s"
 */
export function formatOffset(ms: number): string {
	if (!Number.isFinite(ms)) return "";
	const sign = ms < 0 ? "-" : "+";
	const abs = Math.abs(ms);
	return abs < 60_000 ? `${sign}${(abs / 1000).toFixed(3)} s` : `${sign}${Math.floor(abs / 60_000)}:${((abs % 60_000) / 1000).toFixed(3).padStart(6, "0")}`;
}
