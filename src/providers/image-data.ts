/**
 * An image's payload as a request carries it. `ImageContent.data` is bare base64, but a tool or an
 * application often hands over a data URL (`data:image/png;base64,...`), or nothing at all; sent
 * as it is, either is refused by the API, and since the image stays in the transcript, on every
 * later request of the session too.
 */
import type { ImageContent } from "../types/content.js";

const DATA_URL_PREFIX = /^data:[^,;]*(?:;[^,;]*)*;base64,/i;

/**
 * The image's base64, a data URL's prefix taken off; "" for an image without data.
 *
 * @example
 * imageBase64({ type: "image", mimeType: "image/png", data: "data:image/png;base64,iVBORw0KGgo=" }); // "iVBORw0KGgo="
 */
export function imageBase64(image: ImageContent): string {
	const data: unknown = image.data;
	if (typeof data !== "string") return "";
	return data.replace(DATA_URL_PREFIX, "").trim();
}

/** The note that stands for an image without data. */
export const imageWithoutData = "(image omitted: it has no data)";
