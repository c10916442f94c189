// Answer Check (version 2): what a served answer must be, the same for every provider of the
// chain. A failed check moves the item to the next provider; what it counts against is the
// engine's rule (docs/call-chain.md "Answer Check").
import type { INodeProperties } from 'n8n-workflow';

const CHECK_FINISH =
	"Whether an LLM preset's answer cut at its token limit (finish_reason length, stop_reason max_tokens, MAX_TOKENS), filtered (content_filter, SAFETY, RECITATION) or refused (OpenAI's refusal, Anthropic's stop_reason refusal) moves on to the next provider. Not added: on from version 2.1 of this node, off before.";

export const answerCheck: INodeProperties = {
	displayName: 'Answer Check',
	name: 'answerCheck',
	type: 'collection',
	default: {},
	placeholder: 'Add Check',
	displayOptions: { show: { operation: ['callChain'] } },
	options: [
		{
			displayName: 'Count Cut or Off-Schema Answers Against Provider',
			name: 'countAnswerMisses',
			type: 'boolean',
			default: false,
			description:
				"Whether an answer cut at its token limit or off the schema counts toward opening the provider's breaker in this node's State Scope (Workflow keeps it to this workflow's own breaker). Off: they are this workflow's prompt, schema or Max Tokens, and the provider stays healthy for every other workflow (an empty answer always counts; a refusal never does).",
		},
		{
			displayName: 'Fail Over on Cut, Filtered or Refused Answers',
			name: 'checkFinish',
			type: 'boolean',
			default: true,
			description: CHECK_FINISH,
		},
		{
			displayName: 'Repair Round',
			name: 'repairRound',
			type: 'boolean',
			default: false,
			description:
				'Whether an LLM answer off the JSON Schema gets one more call to the same model, with its answer and the validation errors, before the chain moves on (counted as one call of that provider)',
		},
		{
			displayName: 'JSON Schema',
			name: 'jsonSchema',
			type: 'json',
			default: '',
			placeholder: 'e.g. { "type": "object", "required": ["title"] }',
			description:
				'The answer must satisfy this JSON Schema on every provider: an LLM preset\'s text (a Markdown code fence taken off), any other provider\'s body. The parsed answer is on success under "parsed"; an answer that misses it moves on to the next provider.',
		},
	],
};
