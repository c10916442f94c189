// An answer read as n8n's Structured Output Parser connected to the root node will read it, so an
// answer that passes the Answer Check is one that parser takes: its fence rule (n8n 2's parser
// takes the lines between a line that is only ``` or ```json and the next ``` line, anywhere in
// the text; n8n 1's splits on the first ``` or ```json and parses what follows), its wrapper (the
// user's schema under `output` from the parser's version 1.1, required from 1.3; under
// `__structured__output` in version 1), and the AI Agent's own wrapping of a text answer that is
// JSON as it is. Read from n8n 2.41.1's and 1.123.81's N8nStructuredOutputParser and the Tools
// Agent's getAgentStepsParser. Mechanics of parsing only: whether a miss fails the answer over is
// the engine's call.
import type { Parsed } from './answerJson';

/** How the connected parser reads an answer (found in the workflow by chat/rootParser.ts). */
export interface ParserReading {
	/** The parser node's typeVersion: its wrapper. */
	version: number;
	/** The parser package's fence rule: n8n 2's line rule, or n8n 1's split on the first fence. */
	fence: 'lines' | 'split';
	/** The root node wraps a text answer that is JSON as it is in `output` (the AI Agent). */
	rootWrapsText: boolean;
}

const miss = (message: string): Parsed => ({ ok: false, error: { path: '', message } });

/** The JSON text the parser's fence rule leaves of `text`. */
function unfenced(text: string, fence: ParserReading['fence']): string {
	if (fence === 'split') return text.includes('```') ? text.split(/```(?:json)?/)[1] : text;
	const lines = text.trim().split('\n');
	const start = lines.findIndex((l) => /^```(?:json)?$/.test(l.trim()));
	const end = start < 0 ? -1 : lines.findIndex((l, k) => k > start && l.trim() === '```');
	return end < 0 ? text.trim() : lines.slice(start + 1, end).join('\n');
}

const isObject = (v: unknown): v is Record<string, unknown> =>
	v !== null && typeof v === 'object' && !Array.isArray(v);

/** n8n's unwrapNestedOutput: `{ output: { output: x } }` read as `{ output: x }`. */
function unwrapNested(v: unknown): unknown {
	if (!isObject(v) || Object.keys(v).length !== 1 || !('output' in v)) return v;
	const inner = v.output;
	return isObject(inner) && Object.keys(inner).length === 1 && 'output' in inner ? inner : v;
}

/** The value the parser hands on for its input `text`, or why it would reject it. */
export function parseAsParser(text: string, r: ParserReading): Parsed {
	let json: unknown;
	const body = unfenced(text, r.fence).trim();
	try {
		json = JSON.parse(body);
	} catch (e) {
		return miss(body === '' ? 'the answer has no JSON' : `not JSON: ${(e as Error).message}`);
	}
	if (r.version === 1) {
		const outer = isObject(json) ? json.__structured__output : undefined;
		const value = isObject(outer)
			? (outer.__structured__output__object ?? outer.__structured__output__array)
			: undefined;
		if (value === undefined)
			return miss(
				'the answer is not under `__structured__output` (`__structured__output__object` or `__structured__output__array`), as the Structured Output Parser 1 requires',
			);
		return { ok: true, value: unwrapNested(value) };
	}
	if (!isObject(json))
		return miss(
			'the answer is not a JSON object with `output`, as the Structured Output Parser requires',
		);
	if (json.output === undefined && r.version >= 1.3)
		return miss('the answer has no `output` wrapper, which the Structured Output Parser requires');
	// Before 1.3 the wrapper is optional: without it the parser hands on an empty object.
	return { ok: true, value: unwrapNested(json.output === undefined ? {} : json.output) };
}

/** The parser's input for a model's text answer: as it is, or wrapped by the root node (the AI
 * Agent wraps a text that is JSON as it is, unless it is `{ output }` alone). */
export function parserInput(text: string, r: ParserReading): string {
	if (!r.rootWrapsText) return text;
	let json: unknown;
	try {
		json = JSON.parse(text);
	} catch {
		return text;
	}
	const wrapped = isObject(json) && 'output' in json && Object.keys(json).length === 1;
	return JSON.stringify(wrapped ? json : { output: json });
}
