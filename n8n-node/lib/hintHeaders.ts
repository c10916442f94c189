// The response headers the engine reads hints from (HINT_HEADERS: Retry-After and the vendors'
// rate-limit resets), copied as text from wherever a client left them: a fetch `Headers` (the
// SDKs'), or a plain object of lower-cased names (Node's http, n8n's helpers and its full
// response), whose repeated headers are arrays. The first source that has a header wins.
import type { HintHeaders } from './engine';
import { HINT_HEADERS } from './engineConstants';

type Source = { get?: (name: string) => string | null } | Record<string, unknown> | undefined;

export function hintHeaders(...sources: unknown[]): HintHeaders {
	const headers: HintHeaders = {};
	for (const source of sources as Source[]) {
		if (!source || typeof source !== 'object') continue;
		for (const name of HINT_HEADERS) {
			if (headers[name] !== undefined) continue;
			const raw =
				typeof source.get === 'function'
					? (source.get as (n: string) => string | null)(name)
					: (source as Record<string, unknown>)[name];
			const v = Array.isArray(raw) ? raw[0] : raw;
			if (v !== undefined && v !== null) headers[name] = String(v);
		}
	}
	return headers;
}
