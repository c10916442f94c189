// One provider row of version 2: a name, a kind, an authentication, the few fields its kind
// needs, and an Options collection holding only what the user adds. Everything but the name is
// shown under Call Chain only (Get Provider State and Reset Provider read the names).
import type { INodeProperties } from 'n8n-workflow';
import { CREDENTIAL_TYPES } from '../../../lib/auth';
import { customOptions, presetOptions } from './providerOptions';

const onCall = (show: Record<string, string[]> = {}) => ({
	show: { '/operation': ['callChain'], ...show },
});
const custom = onCall({ kind: ['custom'] });
const llm = onCall({ kind: ['openAiChat', 'anthropicMessages', 'geminiGenerateContent'] });

export const providerRow: INodeProperties[] = [
	{
		displayName: 'Name',
		name: 'name',
		type: 'string',
		default: '',
		required: true,
		placeholder: 'e.g. openai',
		description: 'Unique in the chain; provider state (breaker, cooldown) is kept under this name',
	},
	{
		displayName: 'Kind',
		name: 'kind',
		type: 'options',
		default: 'custom',
		displayOptions: onCall(),
		options: [
			{
				name: 'Custom HTTP',
				value: 'custom',
				description: 'Any HTTP API: method, URL, headers and body as you write them',
			},
			{
				name: 'OpenAI-Compatible Chat Completions',
				value: 'openAiChat',
				description:
					'OpenAI, and with their base URL OpenRouter, Groq, Mistral, DeepSeek, Ollama, vLLM',
			},
			{ name: 'Anthropic Messages', value: 'anthropicMessages' },
			{ name: 'Google Gemini generateContent', value: 'geminiGenerateContent' },
		],
	},
	{
		displayName: 'Authentication',
		name: 'authentication',
		type: 'options',
		default: 'none',
		displayOptions: onCall(),
		description:
			'An n8n credential of a type chosen in Credential Types Used, or a named secret of the Resilient Provider Secrets credential',
		options: [
			{ name: 'None', value: 'none' },
			...CREDENTIAL_TYPES.map((t) => ({ name: t.displayName, value: t.name })),
			{ name: 'Secrets (JSON)', value: 'secret' },
		],
	},
	{
		displayName: 'Secret Name',
		name: 'secretName',
		type: 'string',
		default: '',
		required: true,
		placeholder: 'e.g. openai',
		description:
			'Name of a secret in the Resilient Provider Secrets credential. For an LLM kind the secret is the raw key (the node adds Bearer, x-api-key or x-goog-api-key); for Custom HTTP it is the whole header value.',
		displayOptions: onCall({ authentication: ['secret'] }),
	},
	{
		displayName: 'Method',
		name: 'method',
		type: 'options',
		default: 'auto',
		displayOptions: custom,
		options: [
			{ name: 'Auto (POST With a Body, Else GET)', value: 'auto' },
			...['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD'].map((m) => ({ name: m, value: m })),
		],
	},
	{
		displayName: 'URL',
		name: 'url',
		type: 'string',
		default: '',
		required: true,
		placeholder: 'e.g. https://api.example.com/v1/things',
		displayOptions: custom,
	},
	{
		displayName: 'Headers (JSON)',
		name: 'headersJson',
		type: 'json',
		default: '{}',
		description: 'Plain headers; keys belong in a credential (Authentication), never here',
		displayOptions: custom,
	},
	{
		displayName: 'Body (JSON)',
		name: 'bodyJson',
		type: 'json',
		default: '',
		description: 'Request body; empty sends none. Expressions work.',
		displayOptions: custom,
	},
	{
		displayName: 'Model',
		name: 'model',
		type: 'string',
		default: '',
		required: true,
		placeholder: 'e.g. gpt-4o-mini, claude-3-5-haiku-latest, gemini-2.0-flash',
		displayOptions: llm,
	},
	{
		displayName: 'User Message',
		name: 'userMessage',
		type: 'string',
		default: '',
		required: true,
		typeOptions: { rows: 3 },
		placeholder: 'e.g. {{ $json.question }}',
		description: 'The prompt; expressions work',
		displayOptions: llm,
	},
	customOptions(custom),
	...presetOptions(onCall),
];
