/**
 * The options without the fields given as `null`: for an optional setting `null` is none, as
 * leaving it out is (a value read from a configuration that has none), and the code that reads
 * them then meets only `undefined` (a default parameter or `??` takes it). The object itself when
 * no field is `null`; otherwise a copy.
 *
 * @example
 * withoutNulls({ verbose: null, reasoningMode: "on" }); // { reasoningMode: "on" }
 */
export function withoutNulls<T extends object>(options: T): T {
	const fields = options as Record<string, unknown>;
	if (!Object.keys(fields).some((key) => fields[key] === null)) return options;
	const copy: Record<string, unknown> = {};
	for (const key of Object.keys(fields)) if (fields[key] !== null) copy[key] = fields[key];
	return copy as T;
}
