// A provider row's Options collection: what the user adds, and nothing else, is shown. Each kind
// has its own collection, so each lists only what applies to it; the per-provider overrides of
// the node's settings are in every one.
import type { IDisplayOptions, INodeProperties } from 'n8n-workflow';
import {
	ENGINE_DEFAULTS as D,
	PROVIDER_DEFAULTS,
	PROVIDER_SUGGESTED as S,
} from '../../../lib/engineConstants';
import { numberField } from './numberField';
import { tokenFields } from './tokenFields';
import { OPTIONS_OF } from '../../../lib/providerRowsV2';
import {
	ANTHROPIC_DEFAULT_BASE_URL,
	GEMINI_DEFAULT_BASE_URL,
	OPENAI_DEFAULT_BASE_URL,
	type PresetKind,
} from '../../../lib/presets';

/** This provider's own values of the node's settings (Retry Policy, Breaker) and its limits. */
const overrides: INodeProperties[] = [
	numberField(
		'Breaker Threshold',
		'threshold',
		D.threshold,
		'Failures that open the breaker (cool the provider down)',
	),
	numberField('Max Attempts', 'maxAttempts', D.max_attempts, 'Attempts on this provider per item'),
	numberField(
		'Max In Flight',
		'maxInFlight',
		S.max_in_flight,
		'Cap on calls in flight to this provider across executions',
	),
	numberField(
		'Open Window (ms)',
		'openMs',
		D.open_ms,
		'How long the provider is skipped once tripped',
	),
	numberField(
		'Per-Attempt Deadline (ms)',
		'deadlineMs',
		D.deadline_ms,
		'Ends the attempt even if bytes still trickle in',
	),
	numberField(
		'Rate Limit: Burst',
		'rateLimitBurst',
		S.rate_limit.burst,
		'Requests allowed at once before the rate applies',
	),
	numberField(
		'Rate Limit: Period (ms)',
		'rateLimitPeriodMs',
		S.rate_limit.period_ms,
		'Period of the rate limit',
	),
	numberField(
		'Rate Limit: Requests',
		'rateLimitRequests',
		S.rate_limit.requests,
		'Soft limit per period shared by every execution (e.g. 80% of the vendor quota)',
	),
	numberField(
		'Tier',
		'tier',
		PROVIDER_DEFAULTS.tier,
		'Providers of tier 1 first; a higher tier takes calls only while no provider of a lower one can',
	),
	numberField(
		'Weight',
		'weight',
		PROVIDER_DEFAULTS.weight,
		"This provider's share of new calls in its tier under Weighted routing; 0 drains it (no new calls, only the probe its breaker needs)",
	),
];

/** Shown under Call Chain only (the custom row's options are Check Provider's too). */
const callOnly: IDisplayOptions = { show: { '/operation': ['callChain'] } };

const sorted = (list: INodeProperties[]) =>
	[...list].sort((a, b) => a.displayName.localeCompare(b.displayName));

export function customOptions(displayOptions: IDisplayOptions): INodeProperties {
	return {
		displayName: 'Options',
		name: OPTIONS_OF.custom,
		type: 'collection',
		default: {},
		placeholder: 'Add Option',
		displayOptions,
		options: sorted([
			...overrides,
			...tokenFields(callOnly),
			{ displayName: 'Query (JSON)', name: 'queryJson', type: 'json', default: '{}' },
			{
				displayName: 'Response Must Contain',
				name: 'requiredPath',
				type: 'string',
				default: '',
				placeholder: 'e.g. choices.0.message.content',
				description:
					'Dot path that must hold a non-empty value in the JSON response; otherwise the answer counts as a failure of this provider and the chain moves on',
			},
			{
				displayName: 'Usage Path',
				name: 'usagePath',
				type: 'string',
				default: '',
				placeholder: 'e.g. usage',
				displayOptions: callOnly,
				description:
					"Dot path to the token usage the answer reports (OpenAI's, Anthropic's, Gemini's or Ollama's shape), for Tokens per Minute and Spend Cap; empty: the answer's root",
			},
			{
				displayName: 'Secret Header',
				name: 'secretHeader',
				type: 'string',
				default: 'Authorization',
				description: 'Header that carries the secret value (Authentication: Secrets (JSON))',
			},
		]),
	};
}

const PRESET_BASE_URL: Record<PresetKind, string> = {
	openAiChat: OPENAI_DEFAULT_BASE_URL,
	anthropicMessages: ANTHROPIC_DEFAULT_BASE_URL,
	geminiGenerateContent: GEMINI_DEFAULT_BASE_URL,
};

/** One Options collection per LLM kind (its Base URL defaults to that vendor's). */
export function presetOptions(
	onCall: (show: Record<string, string[]>) => IDisplayOptions,
): INodeProperties[] {
	return (Object.keys(PRESET_BASE_URL) as PresetKind[]).map((kind) => ({
		displayName: 'Options',
		name: OPTIONS_OF[kind],
		type: 'collection',
		default: {},
		placeholder: 'Add Option',
		displayOptions: onCall({ kind: [kind] }),
		options: sorted([
			...overrides,
			...tokenFields(),
			{
				displayName: 'Base URL',
				name: 'baseUrl',
				type: 'string',
				default: PRESET_BASE_URL[kind],
				description:
					kind === 'openAiChat'
						? "The vendor's API root, e.g. https://openrouter.ai/api/v1, https://api.groq.com/openai/v1 or http://localhost:11434/v1 (Ollama)"
						: "The vendor's API root (a proxy or gateway in front of it)",
			},
			{
				displayName: 'Include Raw Response',
				name: 'includeRawResponse',
				type: 'boolean',
				default: false,
				description: "Whether to add the vendor's whole answer body as raw beside the text",
			},
			{
				displayName: 'Max Tokens',
				name: 'maxTokens',
				type: 'number',
				default: 1024,
				typeOptions: { minValue: 1 },
				description: 'Longest answer, in tokens',
			},
			{
				displayName: 'System Prompt',
				name: 'systemPrompt',
				type: 'string',
				default: '',
				typeOptions: { rows: 3 },
				placeholder: 'e.g. You are a concise assistant.',
			},
			{
				displayName: 'Temperature',
				name: 'temperature',
				type: 'number',
				default: 0.7,
				typeOptions: { minValue: 0, maxValue: 2, numberPrecision: 2 },
			},
		]),
	}));
}
