// @ts-nocheck
import type { AgentMessage } from "../types/messages.js";

/**
 * Why `continue()` cannot run on this transcript, in pi's words, or undefined when it can.
 * From an assistant tail it can only run queued messages.
 *
 * @example
 * continueRefusal([], false); // "No messages to continue from"
 */
export function continueRefusal(messages: AgentMessage[], hasQueuedMessages: boolean): string | undefined {
	const last = messages[messages.length - 1] as { role?: string } | undefined;
	if (!last) return "No messages to continue from";
	if (last.role === "assistant" && !hasQueuedMessages) return "Cannot continue from message role: assistant";
	return undefined;
}
