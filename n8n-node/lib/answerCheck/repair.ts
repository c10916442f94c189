// The repair round's words: what the model is told when its answer missed the schema, and where
// each preset's request carries the turn (its answer, then ours). The engine decides that a round
// is due (the call step's `repair`); this only writes it.
import type { PresetKind } from '../presets';
import type { SchemaError } from './schema';

/** What a provider's last answer was, and why it missed the schema. */
export interface Miss {
	text: string;
	errors: SchemaError[];
}

export function repairPrompt(errors: SchemaError[]): string {
	const lines = errors.map((e) => `- ${e.path || '(the whole answer)'}: ${e.message}`);
	return [
		'Your previous answer does not satisfy the required JSON Schema:',
		...lines,
		'Answer again with only the corrected JSON.',
	].join('\n');
}

/** An LLM preset's request body with the repair turn added: its answer, then the errors. */
export function repairBody(kind: PresetKind, body: object, miss: Miss): object {
	const prompt = repairPrompt(miss.errors);
	const b = body as Record<string, unknown>;
	const list = (key: string) => (Array.isArray(b[key]) ? (b[key] as unknown[]) : []);
	if (kind === 'geminiGenerateContent')
		return {
			...b,
			contents: [
				...list('contents'),
				{ role: 'model', parts: [{ text: miss.text }] },
				{ role: 'user', parts: [{ text: prompt }] },
			],
		};
	// OpenAI's chat completions and Anthropic's Messages take the same two turns.
	return {
		...b,
		messages: [
			...list('messages'),
			{ role: 'assistant', content: miss.text },
			{ role: 'user', content: prompt },
		],
	};
}
