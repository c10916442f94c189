// What every preset shares: the fields a user fills in, the one answer shape, and the tolerant
// readers that turn an odd vendor body into empty values instead of an exception.
import { engineModule } from '../engine';

/** What the user fills in for an LLM preset (expressions already resolved). */
export interface PresetFields {
	/** Vendor base URL; empty = the vendor's public API. */
	baseUrl: string;
	model: string;
	systemPrompt?: string;
	userMessage: string;
	temperature?: number;
	maxTokens?: number;
}

/** The vendor request, auth excluded: auth comes from n8n credentials, added by the caller. */
export interface PresetRequest {
	url: string;
	method: 'POST';
	headers: Record<string, string>;
	body: object;
}

/** One answer shape whichever vendor served. Unknown values are '' (text) or null. */
export interface PresetAnswer {
	text: string;
	provider: string;
	model: string | null;
	usage: { input_tokens: number | null; output_tokens: number | null };
	/** Normalised: 'stop', 'length', 'tool_calls', 'content_filter', else the vendor's word in
	 * lower case. */
	finish_reason: string | null;
}

/** Bad preset input, naming the field (the node turns it into a NodeOperationError). */
export class PresetInputError extends Error {
	constructor(
		readonly field: keyof PresetFields,
		problem: string,
	) {
		super(`${field}: ${problem}`);
		this.name = 'PresetInputError';
	}
}

/** The base URL without trailing slashes, or the vendor's default when empty. */
export function baseUrlOr(fields: PresetFields, fallback: string): string {
	const base = (fields.baseUrl ?? '').trim().replace(/\/+$/, '');
	if (base === '') return fallback;
	if (!/^https?:\/\/[^/]/i.test(base))
		throw new PresetInputError('baseUrl', `must start with http:// or https:// (got "${base}")`);
	return base;
}

/** Validates the fields every preset needs; returns the optional numbers to send, if set. */
export function checkedFields(f: PresetFields): {
	model: string;
	temperature?: number;
	maxTokens?: number;
} {
	const model = typeof f.model === 'string' ? f.model.trim() : '';
	if (model === '') throw new PresetInputError('model', 'is required (e.g. gpt-4o-mini)');
	if (typeof f.userMessage !== 'string' || f.userMessage === '')
		throw new PresetInputError('userMessage', 'is required');
	const out: { model: string; temperature?: number; maxTokens?: number } = { model };
	if (f.temperature !== undefined && f.temperature !== null) {
		if (typeof f.temperature !== 'number' || !Number.isFinite(f.temperature) || f.temperature < 0)
			throw new PresetInputError('temperature', 'must be a number of 0 or more');
		out.temperature = f.temperature;
	}
	if (f.maxTokens !== undefined && f.maxTokens !== null) {
		if (!Number.isInteger(f.maxTokens) || f.maxTokens < 1)
			throw new PresetInputError('maxTokens', 'must be a whole number of 1 or more');
		out.maxTokens = f.maxTokens;
	}
	return out;
}

export const JSON_HEADERS: Record<string, string> = {
	'content-type': 'application/json',
	accept: 'application/json',
};

/** `obj[k1][k2]…`, or undefined as soon as a step is not an object (never throws). */
export function at(obj: unknown, ...path: Array<string | number>): unknown {
	let v = obj;
	for (const k of path) {
		if (v === null || typeof v !== 'object') return undefined;
		v = (v as Record<string | number, unknown>)[k];
	}
	return v;
}

export const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);

export const count = (v: unknown): number | null =>
	typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : null;

/** The text parts of an array of parts (`{ text }` objects, other kinds skipped), joined. */
export function joinTexts(parts: unknown, isText: (p: Record<string, unknown>) => boolean): string {
	if (!Array.isArray(parts)) return '';
	return parts
		.filter((p): p is Record<string, unknown> => p !== null && typeof p === 'object' && isText(p))
		.map((p) => (typeof p.text === 'string' ? p.text : ''))
		.join('');
}

/** A JSON body that came back as text (a vendor sent the wrong content-type) is parsed here. */
export function asObject(body: unknown): unknown {
	if (typeof body !== 'string') return body;
	try {
		return JSON.parse(body) as unknown;
	} catch {
		return undefined;
	}
}

/** The vendor's finish word as it came, or null. */
export function finishWord(raw: unknown): string | null {
	return typeof raw === 'string' && raw !== '' ? raw : null;
}

/** Where a vendor's body keeps each part of the answer (any value; odd ones read as empty). */
export interface AnswerParts {
	text: string;
	model: unknown;
	inputTokens: unknown;
	outputTokens: unknown;
	finish: unknown;
}

/** The one answer shape from a vendor's parts, its finish word in the shared vocabulary (the
 * engine's table). */
export function presetAnswer(provider: string, parts: AnswerParts): PresetAnswer {
	const finish = finishWord(parts.finish);
	return {
		text: parts.text,
		provider,
		model: str(parts.model),
		usage: { input_tokens: count(parts.inputTokens), output_tokens: count(parts.outputTokens) },
		finish_reason: finish === null ? null : engineModule().finishReason(finish),
	};
}
