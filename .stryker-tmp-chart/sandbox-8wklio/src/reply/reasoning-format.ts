/**
 * How reasoning looks in a chat channel: a "Reasoning:" header and each line in underscores
 * (italics that survive channels, such as Telegram, where emphasis cannot span lines).
 */
// @ts-nocheck


/**
 * Formats reasoning text for a channel; "" when there is none.
 *
 * @example
 * formatReasoningMessage("Because it helps\n\nand it is short");
 * // "Reasoning:\n_Because it helps_\n\n_and it is short_"
 */
export function formatReasoningMessage(reasoning: string): string {
	const trimmed = reasoning.trim();
	if (trimmed === "") return "";
	const lines = trimmed.split("\n").map((line) => (line.trim() === "" ? "" : `_${line.trim()}_`));
	return `Reasoning:\n${lines.join("\n")}`;
}
