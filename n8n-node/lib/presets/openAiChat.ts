// OpenAI-compatible chat completions: POST <base>/chat/completions. The same dialect is served by
// OpenRouter, Groq, Mistral, DeepSeek, Ollama (/v1) and vLLM; the user sets the base URL.
import {
	asObject,
	at,
	baseUrlOr,
	checkedFields,
	JSON_HEADERS,
	str,
	type AnswerParts,
	type PresetFields,
	type PresetRequest,
} from './shared';

export const OPENAI_DEFAULT_BASE_URL = 'https://api.openai.com/v1';

/** OpenAI's own reasoning models (o1, o3, gpt-5 but not gpt-5-chat) refuse `max_tokens` and want
 * `max_completion_tokens` (LangChain's isReasoningModel); other vendors of the dialect know only
 * `max_tokens`, so the newer name is sent only to OpenAI itself for those models. */
function maxTokensField(base: string, model: string): string {
	const openAi = /^https:\/\/api\.openai\.com(\/|$)/i.test(base);
	const reasoning =
		/^o\d/.test(model) || (model.startsWith('gpt-5') && !model.startsWith('gpt-5-chat'));
	return openAi && reasoning ? 'max_completion_tokens' : 'max_tokens';
}

export function openAiChatRequest(f: PresetFields): PresetRequest {
	const base = baseUrlOr(f, OPENAI_DEFAULT_BASE_URL);
	const { model, temperature, maxTokens } = checkedFields(f);
	const messages: Array<{ role: string; content: string }> = [];
	if (f.systemPrompt) messages.push({ role: 'system', content: f.systemPrompt });
	messages.push({ role: 'user', content: f.userMessage });
	const body: Record<string, unknown> = { model, messages };
	if (temperature !== undefined) body.temperature = temperature;
	if (maxTokens !== undefined) body[maxTokensField(base, model)] = maxTokens;
	return { url: `${base}/chat/completions`, method: 'POST', headers: { ...JSON_HEADERS }, body };
}

/** The answer's parts as the vendor's body has them (its finish word as it came). */
export function openAiChatParts(raw: unknown): AnswerParts {
	const body = asObject(raw);
	const choice = at(body, 'choices', 0);
	const content = at(choice, 'message', 'content');
	// Some servers answer content as parts ([{ type: 'text', text }]); the text parts are joined.
	const text = Array.isArray(content)
		? content.map((p) => str(at(p, 'text')) ?? '').join('')
		: (str(content) ?? '');
	return {
		text,
		model: at(body, 'model'),
		inputTokens: at(body, 'usage', 'prompt_tokens'),
		outputTokens: at(body, 'usage', 'completion_tokens'),
		finish: at(choice, 'finish_reason'),
	};
}
