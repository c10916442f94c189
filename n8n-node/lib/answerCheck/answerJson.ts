// The JSON in a model's answer: its text with a Markdown fence around it (```json … ```) taken
// off, as n8n's Structured Output Parser reads it, or the arguments of the AI Agent's
// final-answer tool call. Not JSON is an error at the answer's root, the schema check's to report.
import type { SchemaError } from './schema';

/** The tool n8n's AI Agent binds for structured output; its arguments are the answer. */
export const FINAL_ANSWER_TOOL = 'format_final_json_response';

const FENCED = /```(?:json|JSON)?[^\S\n]*\n([\s\S]*?)\n?```/;

export type Parsed = { ok: true; value: unknown } | { ok: false; error: SchemaError };

/** The JSON value of an answer's text: fenced or bare. */
export function answerJson(text: string): Parsed {
	const fenced = FENCED.exec(text);
	const body = (fenced ? fenced[1] : text).trim();
	try {
		return { ok: true, value: JSON.parse(body) as unknown };
	} catch (e) {
		const message = body === '' ? 'the answer has no JSON' : `not JSON: ${(e as Error).message}`;
		return { ok: false, error: { path: '', message } };
	}
}

/** The final-answer tool call's arguments as the output parser reads them: n8n's parser (1.3+)
 * wraps the user's schema in `{ output }`, version 1 in `{ __structured__output }`. */
export function finalAnswerArgs(args: unknown): unknown {
	if (args !== null && typeof args === 'object' && !Array.isArray(args)) {
		const a = args as Record<string, unknown>;
		if ('output' in a && Object.keys(a).length === 1) return a.output;
		if ('__structured__output' in a) return a.__structured__output;
	}
	return args;
}
