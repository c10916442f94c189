// Anthropic Messages: POST <base>/v1/messages with `anthropic-version`; `max_tokens` is required
// by the API, so a default is sent when the user leaves it empty.
import {
	asObject,
	at,
	baseUrlOr,
	checkedFields,
	joinTexts,
	JSON_HEADERS,
	type AnswerParts,
	type PresetFields,
	type PresetRequest,
} from './shared';

export const ANTHROPIC_DEFAULT_BASE_URL = 'https://api.anthropic.com';
export const ANTHROPIC_VERSION = '2023-06-01';
/** LangChain's fallback for Anthropic models (FALLBACK_MAX_OUTPUT_TOKENS). */
export const ANTHROPIC_DEFAULT_MAX_TOKENS = 4096;

export function anthropicMessagesRequest(f: PresetFields): PresetRequest {
	const base = baseUrlOr(f, ANTHROPIC_DEFAULT_BASE_URL);
	const { model, temperature, maxTokens } = checkedFields(f);
	const body: Record<string, unknown> = {
		model,
		max_tokens: maxTokens ?? ANTHROPIC_DEFAULT_MAX_TOKENS,
		messages: [{ role: 'user', content: f.userMessage }],
	};
	if (f.systemPrompt) body.system = f.systemPrompt;
	if (temperature !== undefined) body.temperature = temperature;
	return {
		url: `${base}/v1/messages`,
		method: 'POST',
		headers: { ...JSON_HEADERS, 'anthropic-version': ANTHROPIC_VERSION },
		body,
	};
}

/** The answer's parts as the vendor's body has them (its finish word as it came). */
export function anthropicMessagesParts(raw: unknown): AnswerParts {
	const body = asObject(raw);
	return {
		text: joinTexts(at(body, 'content'), (p) => p.type === 'text'),
		model: at(body, 'model'),
		inputTokens: at(body, 'usage', 'input_tokens'),
		outputTokens: at(body, 'usage', 'output_tokens'),
		finish: at(body, 'stop_reason'),
	};
}
