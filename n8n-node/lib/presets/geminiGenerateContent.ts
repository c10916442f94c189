// Google Gemini: POST <base>/v1beta/models/<model>:generateContent with systemInstruction,
// contents and generationConfig (camelCase, as the REST API documents).
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

export const GEMINI_DEFAULT_BASE_URL = 'https://generativelanguage.googleapis.com';

export function geminiGenerateContentRequest(f: PresetFields): PresetRequest {
	const base = baseUrlOr(f, GEMINI_DEFAULT_BASE_URL);
	const checked = checkedFields(f);
	// "models/gemini-2.0-flash" (the API's resource name) and "gemini-2.0-flash" both work.
	const model = checked.model.replace(/^models\//, '');
	const body: Record<string, unknown> = {
		contents: [{ role: 'user', parts: [{ text: f.userMessage }] }],
	};
	if (f.systemPrompt) body.systemInstruction = { parts: [{ text: f.systemPrompt }] };
	const generationConfig: Record<string, number> = {};
	if (checked.temperature !== undefined) generationConfig.temperature = checked.temperature;
	if (checked.maxTokens !== undefined) generationConfig.maxOutputTokens = checked.maxTokens;
	if (Object.keys(generationConfig).length > 0) body.generationConfig = generationConfig;
	return {
		url: `${base}/v1beta/models/${encodeURIComponent(model)}:generateContent`,
		method: 'POST',
		headers: { ...JSON_HEADERS },
		body,
	};
}

/** The answer's parts as the vendor's body has them (its finish word as it came). */
export function geminiGenerateContentParts(raw: unknown): AnswerParts {
	const body = asObject(raw);
	const candidate = at(body, 'candidates', 0);
	return {
		// Thinking models add `thought: true` parts: those are not the answer.
		text: joinTexts(at(candidate, 'content', 'parts'), (p) => p.thought !== true),
		model: at(body, 'modelVersion'),
		inputTokens: at(body, 'usageMetadata', 'promptTokenCount'),
		outputTokens: at(body, 'usageMetadata', 'candidatesTokenCount'),
		finish: at(candidate, 'finishReason'),
	};
}
