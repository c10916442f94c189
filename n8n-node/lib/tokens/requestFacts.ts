// What an item's request is, for the engine's token estimate: its characters (those of CJK
// scripts apart, which take about a token each), the most output it asks for, and the model's
// own count where one is at hand. Facts only; the estimate and its margin are the engine's.
import type { IDataObject } from 'n8n-workflow';

export interface TokenFacts {
	chars: number;
	cjkChars: number;
	/** The input's tokens as the model's tokenizer counted them. */
	counted?: number;
	/** The most output tokens the request asks for. */
	maxOutput?: number;
}

// Han, Hiragana and Katakana, Hangul: a token or so each.
const CJK = /[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]/gu;

/** The facts of a text: its length in characters and how many of them are CJK. */
export function textFacts(text: string): Pick<TokenFacts, 'chars' | 'cjkChars'> {
	return { chars: [...text].length, cjkChars: text.match(CJK)?.length ?? 0 };
}

const whole = (v: unknown): number | undefined =>
	typeof v === 'number' && Number.isInteger(v) && v > 0 ? v : undefined;

/** A vendor request body's facts: its JSON text (the prompt and what frames it) and its output
 * maximum by the vendors' names for it (OpenAI, Anthropic, Gemini, Ollama). */
export function bodyFacts(body: unknown): TokenFacts {
	const text = typeof body === 'string' ? body : (JSON.stringify(body ?? '') ?? '');
	const b = (body !== null && typeof body === 'object' ? body : {}) as IDataObject;
	const gemini = (b.generationConfig ?? {}) as IDataObject;
	const ollama = (b.options ?? {}) as IDataObject;
	return {
		...textFacts(text),
		maxOutput:
			whole(b.max_tokens) ??
			whole(b.max_completion_tokens) ??
			whole(b.max_output_tokens) ??
			whole(gemini.maxOutputTokens) ??
			whole(ollama.num_predict),
	};
}

/** The facts of an item of Call Chain for each provider of its chain with token limits (for
 * every provider where Key Quotas are set: they may count tokens): that provider's own request
 * (its body, its Max Tokens); none for a provider without limits. */
export function planTokenFacts(plan: {
	config: { providers: Array<{ token_limit?: unknown }>; key_quotas?: unknown[] };
	requests: Array<{ body: unknown }>;
}): Array<TokenFacts | undefined> | undefined {
	const every = (plan.config.key_quotas?.length ?? 0) > 0;
	if (!every && !plan.config.providers.some((p) => p.token_limit)) return undefined;
	return plan.config.providers.map((p, k) =>
		every || p.token_limit ? bodyFacts(plan.requests[k].body) : undefined,
	);
}
